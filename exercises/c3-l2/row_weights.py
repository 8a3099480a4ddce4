"""One row of weights: the causal mask and the sink row / 一行权重：因果掩码与 sink 那一行."""


def masked_row(scores, position):
    """The softmax weights of one query row under the causal mask.

    EN: scores holds the row's (already scaled) scores against tokens 1..T in order; the
    query is token `position` (counted from 1). Tokens after it get weight exactly 0 and the
    weights of the rest add up to 1. Return T weights.
    中文：scores 是这一行对 token 1..T 依次的分数（已经缩放过）；这一行的 q 属于第 position 个
    token（从 1 数）。它后面的 token 权重恰为 0，其余的权重加起来为 1。返回 T 个权重。
    """
    raise NotImplementedError


def gei_le_rows():
    """Type in the row of "给了" twice: a 2×5 array, without the mask, then with it.

    EN: Tokens in order 小明, 把, 苹果, 给了, 小王; scores 1.84, -1.04, 2.2, -1.2, 2.04
    (already divided by √4). Columns follow the token order.
    中文：token 依次为 小明、把、苹果、给了、小王；
    分数 1.84、-1.04、2.2、-1.2、2.04（已经除过 √4）。
    第一行不加掩码，第二行加因果掩码；列按 token 顺序。
    """
    raise NotImplementedError


def sink_row():
    """Type in the three weights of the sink row: scores 0.04, 0.36, 0.00 (three numbers).

    中文：sink 那一行三个分数 0.04、0.36、0.00 的 softmax 权重（三个数）。
    """
    raise NotImplementedError
