"""An RNN reads one token at a time / RNN 一次读一个 token."""


def rnn_serial_counts(T):
    """For one RNN layer over T tokens: (serial steps, updates from token 1 to the last state).

    EN: Step t computes h_t from h_{t-1} and x_t, starting from the initial state h_0.
    Return a pair of ints: how many steps must run one after another, and after how many
    updates token 1's information (written into h_1) reaches h_T.
    中文：一层 RNN 读 T 个 token。第 t 步由 h_{t-1} 和 x_t 算出 h_t，从初始状态 h_0 开始。
    返回两个整数：必须一个接一个执行的步数；token 1 的信息（写进 h_1）经过多少次更新才到达 h_T。
    """
    raise NotImplementedError


def updates_between(i, j):
    """After how many updates token i's information (in h_i) reaches h_j, for 1 <= i <= j.

    中文：token i 的信息（在 h_i 里）经过多少次更新到达 h_j（1 <= i <= j），一个整数。
    """
    raise NotImplementedError
