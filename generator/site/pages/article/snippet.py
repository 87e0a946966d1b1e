"""The explainer's training loop in each language: one source file
(templates/article/amp_training.py, in English, the one a test runs), whose comments the
Chinese page shows in Chinese. The code stays byte for byte the same; only the comments are
looked up here. A comment without a translation is an error, so that the two pages cannot
drift apart when the file changes."""

from __future__ import annotations

import io
import tokenize

#: Each comment of the file in Chinese, by its English text. A block of full-line comments
#: is one entry (its lines joined by spaces); "\n" breaks the Chinese into lines.
ZH: dict[str, str] = {
    "Mixed-precision training with the current torch.amp API (PyTorch 2.4 and later). "
    "Runs as is: on a CUDA GPU in bf16 where the GPU supports it, else in fp16 with loss "
    "scaling; without a GPU, on the CPU in bf16.":
        "用现在的 torch.amp API（PyTorch 2.4 及以后）做混合精度训练。\n"
        "原样可跑：CUDA GPU 支持 bf16 就用 bf16，不支持就用 fp16 加损失缩放；\n"
        "没有 GPU 时在 CPU 上用 bf16。",
    "bf16 has fp32's exponent range and needs no loss scaling; fp16 needs it against gradient "
    "underflow. GPUs from Ampere on, and recent CPUs, run bf16; older GPUs get fp16.":
        "bf16 的指数范围和 fp32 一样，不需要损失缩放；fp16 需要它来防止梯度下溢。\n"
        "Ampere 及以后的 GPU 和较新的 CPU 都能跑 bf16；更老的 GPU 用 fp16。",
    "state stays fp32": "优化器状态仍是 fp32",
    "Weights stay fp32; autocast casts them per op (and caches the casts until it exits).":
        "权重仍是 fp32；autocast 逐个算子把它们转成 16 位（转好的副本缓存到退出 autocast 为止）。",
    "backward outside autocast; grads land in fp32 .grad":
        "反向传播放在 autocast 之外；梯度写进 fp32 的 .grad",
    "unscales the gradients, skips the step if any is inf/NaN":
        "先把梯度除回缩放系数，有 inf/NaN 就跳过这一步",
    "frees .grad instead of filling it with zeros": "直接释放 .grad，而不是填零",
}
TRANSLATIONS = {"zh": ZH}


def comments(code: str) -> list[tuple[int, int, int, str]]:
    """The file's comments as (first line, last line, column, English text), 1-based lines:
    consecutive full-line comments at one column are one block, a comment after code its
    own."""
    found: list[tuple[int, int, int, str]] = []
    lines = code.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type != tokenize.COMMENT:
            continue
        (row, col), text = token.start, token.string.lstrip("#").strip()
        alone = not lines[row - 1][:col].strip()
        last = found[-1] if found else None
        if alone and last and last[1] == row - 1 and last[2] == col \
                and not lines[last[0] - 1][:col].strip():
            found[-1] = (last[0], row, col, f"{last[3]} {text}")
        else:
            found.append((row, row, col, text))
    return found


def in_language(code: str, lang: str) -> str:
    """The file with its comments in `lang` ("en": as it is). Raises KeyError for a comment
    the language has no translation of."""
    if lang == "en":
        return code
    table = TRANSLATIONS[lang]
    lines = code.splitlines()
    for first, last, col, text in reversed(comments(code)):
        if text not in table:
            raise KeyError(f"no {lang} translation of the snippet's comment {text!r}")
        translated = table[text].split("\n")
        if first == last and lines[first - 1][:col].strip():  # after code: keep the code
            lines[first - 1] = lines[first - 1][:col] + "# " + " ".join(translated)
        else:
            indent = lines[first - 1][:col]
            lines[first - 1:last] = [f"{indent}# {part}" for part in translated]
    return "\n".join(lines) + ("\n" if code.endswith("\n") else "")
