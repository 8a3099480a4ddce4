"""Feedback as data (``Msg``) and its phrasing in English and Chinese.

Comparators and the grader produce ``Msg(code, **values)``; only this module
turns them into sentences.  A code's ``hidden`` phrasing, where it has one,
says what kind of mistake it is without any value, so it is safe to show on
a hidden check; codes without one are replaced by a fixed sentence there.
"""

import dataclasses
import math
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
    "got-type": ("returned a {got_type}, expected a {want}", "返回了 {got_type}，应为 {want}",
                 "returned a {got_type}, expected a {want}", "返回了 {got_type}，应为 {want}"),
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
                      "{got} is not one of the choices {options}",
                      "{got} 不是可选项 {options} 之一"),
    "got-text-for-set": ("returned the text {got}; return a set or list of choices",
                         "返回了文本 {got}；应返回选项的集合或列表",
                         "returned text; return a set or list of choices",
                         "返回了文本；应返回选项的集合或列表"),
    "set": ("missing {missing}; should not include {extra}", "缺少 {missing}；不应包含 {extra}",
            None, None),
    "bad-bytes": ("the answer is not a byte quantity: {problem}", "答案不是字节数：{problem}",
                  "the answer is not a byte quantity: {problem}", "答案不是字节数：{problem}"),
    "bytes": ("expected {want_bytes}, not {got_bytes}", "应为 {want_bytes}，而不是 {got_bytes}",
              None, None),
    "keys": ("the keys differ: missing {missing}, unexpected {extra}",
             "键不一致：缺少 {missing}，多出 {extra}",
             "the keys differ: missing {missing}, unexpected {extra}",
             "键不一致：缺少 {missing}，多出 {extra}"),
    "at-key": ("at key {key}: {inner}", "键 {key}：{inner}", "at key {key}: {inner}",
               "键 {key}：{inner}"),
    "formula-is-number": ("returned the number {got} where a formula in the inputs is expected",
                          "返回了数 {got}，这里需要一个关于输入的公式",
                          "returned a number where a formula is expected",
                          "返回了数，这里需要公式"),
    "formula-foreign-symbols": ("the formula uses {symbols}, which are not inputs",
                                "公式用到了 {symbols}，它们不是输入",
                                "the formula uses {symbols}, which are not inputs",
                                "公式用到了 {symbols}，它们不是输入"),
    "formula-unverifiable": ("the formula could not be evaluated, so it is not accepted",
                             "公式无法求值，因此不予通过",
                             "the formula could not be evaluated, so it is not accepted",
                             "公式无法求值，因此不予通过"),
    "formula-differs": ("the formula differs from the expected one: at {point} it gives {got}, "
                        "expected {expected}", "公式与参考不一致：在 {point} 处得到 {got}，应为 {expected}",
                        None, None),
    # outcomes of the call itself
    "not-implemented": ("not implemented yet: {function} still raises NotImplementedError",
                        "还没有实现：{function} 仍然抛出 NotImplementedError", "same", "same"),
    "student-error": ("{function} raised {type}: {message}{where}",
                      "{function} 抛出了 {type}：{message}{where}", "same", "same"),
    "syntax-error": ("{file} has a syntax error: {message}{where}",
                     "{file} 有语法错误：{message}{where}", "same", "same"),
    "import-error": ("importing {file} raised {type}: {message}{where}",
                     "导入 {file} 时抛出了 {type}：{message}{where}", "same", "same"),
    "missing-function": ("`{function}` is not defined in {file} — did you rename it?",
                         "{file} 里没有定义 `{function}`——是不是改了名字？", "same", "same"),
    "unsupported": ("{function} returned a {type_name}, expected {want}",
                    "{function} 返回了 {type_name}，应为 {want}", "same", "same"),
    "too-large": ("{function} returned an answer far too large to be right ({size} bytes "
                  "encoded, limit {limit})", "{function} 的返回值大得不可能是对的（编码后 {size} 字节，上限 {limit}）",
                  "same", "same"),
    "timeout": ("{function} took longer than {seconds} s (the time limit)",
                "{function} 运行超过 {seconds} 秒（时间上限）", "same", "same"),
    "import-timeout": ("importing {file} took longer than {seconds} s (the time limit)",
                       "导入 {file} 超过 {seconds} 秒（时间上限）", "same", "same"),
    "memory": ("used more than {limit} of memory (the memory limit)",
               "内存用量超过 {limit}（内存上限）", "same", "same"),
    "cpu": ("used more than {seconds} s of CPU time (the CPU limit)",
            "CPU 时间超过 {seconds} 秒（CPU 上限）", "same", "same"),
    "disk": ("wrote more than {limit} of files (the disk limit)",
             "写入的文件超过 {limit}（磁盘上限）", "same", "same"),
    "processes": ("could not start: this run already has {limit} processes (the process "
                  "limit)", "无法启动：本次评分的进程数已达 {limit}（进程上限）", "same", "same"),
    "crashed": ("the process crashed ({signal})", "进程崩溃了（{signal}）", "same", "same"),
    "exited": ("the process exited (code {code}) before answering; do not call exit() in "
               "graded code", "进程在返回答案前退出了（退出码 {code}）；被评分的代码里不要调用 exit()",
               "same", "same"),
    "missing-file": ("{file} is missing from the submission", "提交里缺少 {file}",
                     "same", "same"),
    "bad-answer": ("the answer could not be read ({detail})", "无法读取答案（{detail}）",
                   "same", "same"),
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
                       "same", "same"),
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
    values = {k: _render_value(v, lang, hidden, k in VALUE_KEYS)
              for k, v in msg.values.items()}
    if "rtol" in msg.values:
        values["rtol_pct"] = _percent(msg.values["rtol"])
    return template.format(**values)


VALUE_KEYS = {"expected", "got", "options", "missing", "extra", "key", "point", "shape",
              "index", "error", "atol"}


def _render_value(value, lang, hidden, is_value):
    if isinstance(value, Msg):
        return render(value, lang, hidden) or ""
    if isinstance(value, Text):
        return value.get(lang)
    return str(value) if isinstance(value, str) and not is_value else fmt(value)


def _percent(rtol):
    return f"{float(rtol) * 100:g}%"


def fmt(value):
    """A short, readable rendering of an answer or expected value."""
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
        inner = ", ".join(fmt(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(fmt(v) for v in value)) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{fmt(k)}: {fmt(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return repr(value)
    text = str(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _float(x):
    if math.isnan(x) or math.isinf(x):
        return str(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x)) if abs(x) >= 1e4 else f"{x:g}"
    return f"{x:.4g}"
