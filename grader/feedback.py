"""Feedback as data (``Msg``) and its phrasing in English and Chinese.

Comparators and the grader produce ``Msg(code, **values)``; only this module
turns them into sentences.  A code's ``hidden`` phrasing, where it has one,
says what kind of mistake it is without any value, so it is safe to show on
a hidden check; codes without one are replaced by a fixed sentence there.
"""

import dataclasses
import math
import unicodedata
from fractions import Fraction

import numpy as np

from .spec import Text


@dataclasses.dataclass(frozen=True)
class Msg:
    code: str
    values: dict

    def __init__(self, code, /, **values):
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "values", values)


class Shown(str):
    """A value already phrased for the report (it crossed from a judging fork)."""


KIND_WORDS = {   # what a check wants, for "expected a ..." messages
    "number": Text("一个数", "a number"),
    "array": Text("一个数值数组", "an array of numbers"),
    "shape": Text("一个整数元组", "a tuple of ints"),
    "exact": Text("一个普通的值", "a plain value"),
    "choice": Text("一个选项（字符串）", "a choice (a string)"),
    "set": Text("选项的集合或列表", "a set or list of choices"),
    "formula": Text("一个 sympy 表达式", "a sympy expression"),
    "bytes": Text("整数字节数或 '512 KiB' 这样的字符串",
                  "an int of bytes or a string such as '512 KiB'"),
    "dict": Text("一个字典", "a dict"),
    "bool": Text("一个布尔值", "a bool"),
    "plain": Text("一个普通的值（数、字符串、列表、元组、字典、ndarray 或 sympy 表达式）",
                   "a plain value (number, string, list, tuple, dict, ndarray or sympy "
                   "expression)"),
}



# code: (en, zh, hidden_en, hidden_zh); hidden None = never shown on hidden checks
TEMPLATES = {
    # tolerances
    "tol-rel-abs": ("tolerance: relative error up to {rtol_pct}, or absolute error up to {atol}",
                    "容差：相对误差不超过 {rtol_pct}，或绝对误差不超过 {atol}", None, None),
    "tol-sigfigs": ("tolerance: {n} significant figures", "容差：{n} 位有效数字", None, None),
    "tol-exact": ("must match exactly", "必须完全一致", None, None),
    "tol-bytes-exact": ("the exact number of bytes, in any unit",
                        "字节数必须精确，单位不限", None, None),
    "tol-bytes-rel": ("the number of bytes within {rtol_pct}, in any unit",
                      "字节数误差不超过 {rtol_pct}，单位不限", None, None),
    "tol-formula": ("the same formula for every value of its symbols (checked with sympy)",
                    "对符号的任意取值都与参考公式相等（用 sympy 检验）", None, None),
    "tol-set": ("the same items, in any order", "元素相同即可，顺序不限", None, None),
    # comparison failures
    "value": ("expected {expected}, not {got}", "应为 {expected}，而不是 {got}", None, None),
    "shape": ("expected shape {expected}, not {got}", "形状应为 {expected}，而不是 {got}",
              "the shape is wrong", "形状不对"),
    "transposed": ("the answer looks transposed: its transpose matches the expected {shape} "
                   "array", "答案像是转置了：把它转置后才和期望的 {shape} 数组一致",
                   "the answer looks transposed", "答案像是转置了"),
    "shape-transposed": ("expected shape {expected}, not {got}: rows and columns are swapped "
                         "(a weight matrix is input length × output length)",
                         "形状应为 {expected}，而不是 {got}：行和列写反了（权重矩阵是 输入长度 × 输出长度）",
                         "rows and columns are swapped (a weight matrix is input length × "
                         "output length)", "行和列写反了（权重矩阵是 输入长度 × 输出长度）"),
    "array-values": ("{count} of {total} elements differ; the largest error is {error} at "
                     "index {index} (expected {expected}, got {got})",
                     "{total} 个元素中有 {count} 个不对；最大误差 {error}，在下标 {index}"
                     "（应为 {expected}，实际 {got}）", None, None),
    "nonfinite": ("the answer contains {kind} ({count} element(s), first at index {index})",
                  "答案里有 {kind}（{count} 个元素，第一个在下标 {index}）",
                  "the answer contains {kind}", "答案里有 {kind}"),
    "got-bool-for-number": ("returned {got}, a bool, where a number is expected",
                            "返回了布尔值 {got}，这里需要一个数",
                            "returned a bool where a number is expected", "返回了布尔值，这里需要一个数"),
    "got-sequence-for-number": ("returned {got}, a sequence, where a single number is expected "
                                "(a vector has a length, not rows and columns)",
                                "返回了序列 {got}，这里需要一个数（向量只有长度，没有行和列）",
                                "returned a sequence where a single number is expected (a "
                                "vector has a length, not rows and columns)",
                                "返回了序列，这里需要一个数（向量只有长度，没有行和列）"),
    "got-array-for-number": ("returned an array of shape {shape} where a single number is "
                             "expected", "返回了形状为 {shape} 的数组，这里需要一个数",
                             "returned an array where a single number is expected",
                             "返回了数组，这里需要一个数"),
    "got-text-for-number": ("returned the text {got} where a number is expected",
                            "返回了文本 {got}，这里需要一个数",
                            "returned text where a number is expected", "返回了文本，这里需要一个数"),
    "got-formula-for-number": ("returned a formula in {symbols} where a number is expected",
                               "返回了含 {symbols} 的公式，这里需要一个数",
                               "returned a formula where a number is expected",
                               "返回了公式，这里需要一个数"),
    "got-complex": ("returned a complex number", "返回了复数",
                    "returned a complex number", "返回了复数"),
    "unevaluable": ("the answer could not be evaluated to a number in time",
                    "答案无法在限定时间内算成一个数",
                    "the answer could not be evaluated to a number in time",
                    "答案无法在限定时间内算成一个数"),
    "got-number-for-array": ("returned a single number {got} where an array of shape {shape} "
                             "is expected", "返回了单个数 {got}，这里需要形状为 {shape} 的数组",
                             "returned a single number where an array is expected",
                             "返回了单个数，这里需要一个数组"),
    "ragged": ("the answer is not a rectangular array of numbers",
               "答案不是一个规整的数值数组", "the answer is not a rectangular array of numbers",
               "答案不是一个规整的数值数组"),
    "got-type": ("returned a {got_type}, expected {want}", "返回了 {got_type}，应为 {want}",
                 "returned a value of another type, expected {want}",
                 "返回值的类型不对，应为 {want}"),
    "got-int-for-shape": ("returned the single number {got} where a shape (a tuple of whole "
                          "numbers) is expected", "返回了单个数 {got}，这里需要形状（整数元组）",
                          "returned a single number where a shape (a tuple) is expected",
                          "返回了单个数，这里需要形状（元组）"),
    "got-array-for-shape": ("returned an array of shape {shape}; return its shape as a tuple "
                            "instead", "返回了形状为 {shape} 的数组；这里要返回形状本身（元组）",
                            "returned an array; return a shape as a tuple instead",
                            "返回了数组；这里要返回形状本身（元组）"),
    "got-fraction-for-int": ("returned {got}, expected a whole number",
                             "返回了 {got}，应为整数", "returned a non-integer, expected a whole "
                             "number", "返回了非整数，应为整数"),
    "not-an-option": ("{got} is not one of the choices {options}",
                      "{got} 不是可选项 {options} 之一",
                      "the answer is not one of the choices", "答案不是可选项之一"),
    "got-text-for-set": ("returned the text {got}; return a set or list of choices",
                         "返回了文本 {got}；应返回选项的集合或列表",
                         "returned text; return a set or list of choices",
                         "返回了文本；应返回选项的集合或列表"),
    "set": ("missing {missing}; should not include {extra}", "缺少 {missing}；不应包含 {extra}",
            None, None),
    "bad-bytes": ("the answer is not a byte quantity: {problem}", "答案不是字节数：{problem}",
                  "the answer is not a byte quantity", "答案不是字节数"),
    "bytes": ("expected {want_bytes}, not {got_bytes}", "应为 {want_bytes}，而不是 {got_bytes}",
              None, None),
    "keys": ("the keys differ: missing {missing}, unexpected {extra}",
             "键不一致：缺少 {missing}，多出 {extra}",
             "the dict does not have the expected keys", "字典的键与期望的不一致"),
    "at-key": ("at key {key}: {inner}", "键 {key}：{inner}", "a value in the dict is wrong",
               "字典里有一个值不对"),
    "formula-is-number": ("returned the number {got} where a formula in the inputs is expected",
                          "返回了数 {got}，这里需要一个关于输入的公式",
                          "returned a number where a formula is expected",
                          "返回了数，这里需要公式"),
    "formula-foreign-symbols": ("the formula uses {symbols}, which are not inputs",
                                "公式用到了 {symbols}，它们不是输入",
                                "the formula uses symbols that are not inputs",
                                "公式用到了不是输入的符号"),
    "formula-unverifiable": ("the formula could not be evaluated, so it is not accepted",
                             "公式无法求值，因此不予通过",
                             "the formula could not be evaluated, so it is not accepted",
                             "公式无法求值，因此不予通过"),
    "formula-nonfinite": ("the formula contains NaN or infinity, so it is not accepted",
                          "公式里含有 NaN 或无穷大，因此不予通过", "same", "same"),
    "formula-differs": ("the formula differs from the expected one: at {point} it gives {got}, "
                        "expected {expected}", "公式与参考不一致：在 {point} 处得到 {got}，应为 {expected}",
                        None, None),
    "unjudgeable": ("the answer could not be read as a number or value of the kind asked for",
                    "答案无法按所需的类型（数或值）读取", "same", "same"),
    "needs-value-checks": ("this property counts once {functions} also passes its value checks",
                           "{functions} 通过数值检查之后，这项性质检查才计分", "same", "same"),
    "needs-hidden-checks": ("this check counts once {function} also passes a hidden check: "
                            "answers written in for the inputs you can see earn nothing",
                            "{function} 通过至少一项隐藏检查之后，这项检查才计分：照着看得见的输入"
                            "写死答案不得分", "same", "same"),
    "judge-timeout": ("checking this answer took longer than {seconds} s, so it is not accepted",
                      "检查这个答案用时超过 {seconds} 秒，因此不予通过", "same", "same"),
    # outcomes of the call itself
    "not-implemented": ("not implemented yet: {function} still raises NotImplementedError",
                        "还没有实现：{function} 仍然抛出 NotImplementedError", "same", "same"),
    "student-error": ("{function} raised {type}: {message}{where}",
                      "{function} 抛出了 {type}：{message}{where}",
                      "{function} raised {safe_type}", "{function} 抛出了 {safe_type}"),
    "syntax-error": ("{file} has a syntax error: {message}{where}",
                     "{file} 有语法错误：{message}{where}",
                     "{file} has a syntax error", "{file} 有语法错误"),
    "import-error": ("importing {file} raised {type}: {message}{where}",
                     "导入 {file} 时抛出了 {type}：{message}{where}",
                     "importing {file} raised {safe_type}", "导入 {file} 时抛出了 {safe_type}"),
    "missing-function": ("`{function}` is not defined in {file} — did you rename it?",
                         "{file} 里没有定义 `{function}`——是不是改了名字？", "same", "same"),
    "unsupported": ("{function} returned a {type_name}, expected {want}",
                    "{function} 返回了 {type_name}，应为 {want}",
                    "{function} returned a value of a type that cannot be graded, expected {want}",
                    "{function} 返回值的类型无法评分，应为 {want}"),
    "too-large": ("{function} returned an answer far too large to be right ({size} bytes "
                  "encoded, limit {limit})", "{function} 的返回值大得不可能是对的（编码后 {size} 字节，上限 {limit}）",
                  "{function} returned an answer far too large to be right (limit {limit})",
                  "{function} 的返回值大得不可能是对的（上限 {limit}）"),
    "timeout": ("{function} took longer than {seconds} s (the time limit)",
                "{function} 运行超过 {seconds} 秒（时间上限）", "same", "same"),
    "import-timeout": ("importing {file} took longer than {seconds} s (the time limit)",
                       "导入 {file} 超过 {seconds} 秒（时间上限）", "same", "same"),
    "memory": ("used more than {limit} of memory (the memory limit)",
               "内存用量超过 {limit}（内存上限）", "same", "same"),
    "cpu": ("used more than {seconds} s of CPU time (the CPU limit)",
            "CPU 时间超过 {seconds} 秒（CPU 上限）", "same", "same"),
    "crashed": ("the process crashed ({signal})", "进程崩溃了（{signal}）",
                "the process crashed", "进程崩溃了"),
    "exited": ("the process exited (code {code}) before answering; do not call exit() in "
               "graded code", "进程在返回答案前退出了（退出码 {code}）；被评分的代码里不要调用 exit()",
               "the process exited before answering; do not call exit() in graded code",
               "进程在返回答案前退出了；被评分的代码里不要调用 exit()"),
    "missing-file": ("{file} is missing from the submission", "提交里缺少 {file}",
                     "same", "same"),
    "bad-answer": ("the answer could not be read ({detail})", "无法读取答案（{detail}）",
                   "the answer could not be read", "无法读取答案"),
    "skipped": ("not run: {detail}", "未运行：{detail}", "same", "same"),
    "mutated-args": ("{function} modified its input arrays; work on copies instead",
                     "{function} 修改了传入的数组；请在副本上计算", "same", "same"),
    "hidden-failed": ("A hidden check failed; its inputs and expected answer are not shown.",
                      "一项隐藏测试未通过；不显示它的输入和期望答案。", "same", "same"),
    "hidden-passed": ("Hidden check passed.", "隐藏测试通过。", "same", "same"),
    "passed": ("passed", "通过", "same", "same"),
    "at-submission": ("checked when you submit your work", "提交作业时再检查", "same", "same"),
    "output-dropped": ("your code printed more than {kept} characters in this call; the other "
                       "{dropped} were dropped", "你的代码在这次调用中输出超过 {kept} 个字符，其余 {dropped} 个被丢弃",
                       "your code printed more than {kept} characters in this call; the rest "
                       "was dropped", "你的代码在这次调用中输出超过 {kept} 个字符，其余被丢弃"),
    "call": ("called {call}", "调用 {call}", None, None),
    "where": (" ({file}, line {line})", "（{file} 第 {line} 行）", "same", "same"),
    "hint": ("hint: {text}", "提示：{text}", "same", "same"),
    "misconception": ("likely mistake [{tag}]: {text}", "可能的错误 [{tag}]：{text}",
                      "same", "same"),
}


def render(msg, lang, hidden=False):
    """Phrase ``msg`` in ``lang``; on a hidden check, None if it would leak values."""
    en, zh, hidden_en, hidden_zh = TEMPLATES[msg.code]
    template = zh if lang == "zh" else en
    if hidden:
        alt = hidden_zh if lang == "zh" else hidden_en
        if alt is None:
            return None
        template = template if alt == "same" else alt
    values = {k: _render_value(k, v, lang, hidden) for k, v in msg.values.items()}
    if "rtol" in msg.values:
        values["rtol_pct"] = _percent(msg.values["rtol"])
    return template.format(**values)


VALUE_KEYS = {"expected", "got", "options", "missing", "extra", "key", "point", "shape",
              "index", "error", "atol"}
MAX_SHOWN = 300     # characters of any one value quoted in feedback


def _render_value(key, value, lang, hidden):
    if key == "want" and isinstance(value, str) and value in KIND_WORDS:
        return KIND_WORDS[value].get(lang)
    if isinstance(value, Msg):
        return render(value, lang, hidden) or ""
    if isinstance(value, Text):
        return value.get(lang)
    text = str(value) if isinstance(value, str) and key not in VALUE_KEYS else fmt(value)
    return printable(text)


def printable(text, limit=MAX_SHOWN):
    """``text`` safe for a terminal, a JSON file and a CSV: control and format
    characters and lone surrogates escaped, at most ``limit`` characters."""
    out = []
    for ch in text[:limit + 1]:
        category = unicodedata.category(ch)
        if category in ("Cc", "Cf", "Cs", "Zl", "Zp", "Co", "Cn"):
            out.append(ch.encode("unicode_escape", "backslashreplace").decode("ascii")
                       if category != "Cs" else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    shown = "".join(out)
    return shown if len(text) <= limit else shown[:limit] + "…"


def _percent(rtol):
    return f"{float(rtol) * 100:g}%"


def fmt(value):
    """A short, readable rendering of an answer or expected value."""
    if isinstance(value, Shown):
        return str(value)
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, Fraction):
        return f"{value.numerator}/{value.denominator}"
    if isinstance(value, np.ndarray):
        if value.size > 64:
            return f"array of shape {tuple(value.shape)}"
        text = np.array2string(value, precision=4, suppress_small=True, separator=", ")
        return " ".join(text.split())
    if isinstance(value, tuple):
        inner = _items(value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + _items(value) + "]"
    if isinstance(value, (set, frozenset)):
        return "{" + _items(sorted(value, key=str)) + "}"
    if isinstance(value, dict):
        return "{" + _items(value.items(), pairs=True) + "}"
    if isinstance(value, str):
        return repr(value[:MAX_SHOWN] + "…") if len(value) > MAX_SHOWN else repr(value)
    text = str(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _items(items, pairs=False, most=12):
    """Comma-separated items, the first ``most`` of them (long answers are cut)."""
    shown = []
    for i, item in enumerate(items):
        if i == most:
            shown.append("…")
            break
        shown.append(f"{fmt(item[0])}: {fmt(item[1])}" if pairs else fmt(item))
    return ", ".join(shown)


def _float(x):
    if math.isnan(x) or math.isinf(x):
        return str(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x)) if abs(x) >= 1e4 else f"{x:g}"
    return f"{x:.4g}"
