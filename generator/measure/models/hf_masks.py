"""Hugging Face's attention masks on fake tensors: left out where a real run of the same batch
leaves them out.

With SDPA, transformers 5 (`masking_utils`) builds no 4D attention mask when the batch's 2D
padding mask holds no padding: SDPA's kernels then apply causality themselves (`is_causal`),
and on CUDA the flash kernel stays open. To know, `_ignore_causal_mask_sdpa` and
`_ignore_bidirectional_mask_sdpa` read the padding mask's values, unless `is_tracing(mask)`,
which holds for fake tensors: an estimate would then build the mask, as large as the batch,
where the real run builds none. The step's batches have no padding (their masks are ones,
the batch's own or the model's: BART's decoder makes `torch.ones` when given none), so during
an estimate the two tests take a fake padding mask for one without padding. A mask they
still keep (a sliding window, eager attention) holds the padding mask, as in the real run.

Without a key/value cache (a step with checkpointing: transformers turns the cache off for
it) and without a padding mask, `_preprocess_mask_arguments` also looks for several
sequences packed into one row, by reading the position ids (`find_packed_sequence_indices`),
and builds a 4D mask for them unless `is_tracing`: an estimate would build one, as large as
the batch's attention matrix, and with it lose the flash kernel. The model makes those
position ids itself, one `arange` per row (one sequence), so during an estimate fake position
ids are read as unpacked too.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import sys
from collections.abc import Iterator

_unpadded_reads = 0
_unpacked_reads = 0
#: masking_utils' tests of whether a mask can be left out; the padding mask comes first.
SKIP_TESTS = ("_ignore_causal_mask_sdpa", "_ignore_bidirectional_mask_sdpa")
#: masking_utils' test of whether the position ids pack several sequences into a row.
PACKING_TEST = "find_packed_sequence_indices"


@contextlib.contextmanager
def fake_masks_read_as_unpadded() -> Iterator[None]:
    """Meanwhile, the skip tests of the installed transformers read a fake padding mask as
    one without padding, and its packing test fake position ids as one sequence a row (real
    tensors are read as before); afterwards they are transformers'
    own again. Nothing to do where transformers is not imported, or has no masking_utils
    (before 4.53, whose tests read no fake values)."""
    masking = sys.modules.get("transformers.masking_utils")
    if masking is None and "transformers" in sys.modules:
        with contextlib.suppress(ImportError):
            masking = importlib.import_module("transformers.masking_utils")
    own = {name: getattr(masking, name) for name in (*SKIP_TESTS, PACKING_TEST)
           if masking is not None and hasattr(getattr(masking, name, None), "__call__")
           and not hasattr(getattr(masking, name), "__wrapped__")}
    for name, test in own.items():
        setattr(masking, name, _reading_fake_masks_as_unpadded(test)
                if name in SKIP_TESTS else _reading_fake_positions_as_unpacked(test))
    try:
        yield
    finally:
        for name, test in own.items():
            setattr(masking, name, test)


def unpadded_reads() -> int:
    """How many times a skip test has read a fake padding mask as one without padding."""
    return _unpadded_reads


def unpacked_reads() -> int:
    """How many times the packing test has read fake position ids as one sequence a row."""
    return _unpacked_reads


def _reading_fake_masks_as_unpadded(test):
    from torch._subclasses.fake_tensor import FakeTensor

    @functools.wraps(test)
    def skip_test(padding_mask, *args, **kwargs):
        if isinstance(padding_mask, FakeTensor):
            global _unpadded_reads
            _unpadded_reads += 1
            padding_mask = None  # transformers' own spelling of "no padding"
        return test(padding_mask, *args, **kwargs)
    return skip_test


def _reading_fake_positions_as_unpacked(test):
    from torch._subclasses.fake_tensor import FakeTensor

    @functools.wraps(test)
    def packing_test(position_ids, *args, **kwargs):
        if isinstance(position_ids, FakeTensor):
            global _unpacked_reads
            _unpacked_reads += 1
            return None  # transformers' own answer for one sequence a row
        return test(position_ids, *args, **kwargs)
    return packing_test
