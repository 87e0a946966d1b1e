"""What PyTorch's fused LSTM kernel on the CPU allocates that fake tensors do not show, in bytes.

On the CPU, `nn.LSTM` in fp32 (or bf16 on CPUs with AVX-512) trains through oneDNN: ATen's
`lstm` calls `mkldnn_rnn` (use_mkldnn in aten/src/ATen/native/RNN.cpp; fp16 only without
grad), which runs one `aten::mkldnn_rnn_layer` per layer and direction
(aten/src/ATen/native/mkldnn/RNN.cpp). GRU and plain RNN take ATen's step-by-step path on the
CPU (only `lstm_mkldnn_stub` is registered), whose every op fake tensors see. Two things the
LSTM kernel allocates escape an estimate on fake tensors:

1. The WORKSPACE, returned as the op's fourth output and saved by autograd for
   `mkldnn_rnn_layer_backward`. Its meta kernel (`mkldnn_rnn_layer` in
   torch/_meta_registrations.py, PyTorch 2.13) returns `torch.empty(0, dtype=torch.uint8)`,
   so the estimate saw nothing where the real run keeps, per layer, about 15·T·N·H words
   (gates, hidden states, cell states and their gradients over T steps of N sequences, for
   an input as wide as the hidden size H): conv-lstm's estimate came out at a fifth of the
   real step's peak.
   `workspace_bytes` is oneDNN's rule (src/cpu/rnn/rnn_utils.hpp `set_workspace_sizes`,
   rnn_utils.cpp `set_offsets`: seven page-aligned parts), exact to the byte against the
   profiler on 162 shapes (T 1–50, N 1–130, input 5–256, hidden 16–256, fp32 and bf16)
   and in tests/unit/test_onednn_lstm.py.
2. Buffers the kernel holds only WHILE IT RUNS, allocated inside it (below the dispatcher,
   so neither a fake kernel nor a TorchDispatchMode sees them): oneDNN's scratchpad (ideep
   books it per call, scratchpad_mode::user, include/ideep/operators/lstm.hpp), the weights
   reordered into oneDNN's layout, backward's zeroed diff-weight buffers, and ATen's own
   temporaries (the summed bias, a contiguous copy of the incoming gradient, zero gradients
   for unused final states, fp32 copies of 16-bit gradients). `forward_buffers` and
   `backward_buffers` list them; the largest, the scratchpad's gate buffer, is as big as the
   workspace's gates. At the start of backward, where a training step peaks, they add about
   an eighth to the real CPU allocator's peak of an LSTM model.

oneDNN here is v3.12 (the one PyTorch 2.13 bundles), commit 80afa71 of
github.com/uxlfoundation/oneDNN. The buffers are exact too on the same shapes, but for the
brgemm kernels' own scratch (bf16 on CPUs with AVX512-BF16): per-thread buffers that depend
on the thread count and cache sizes (rnn_brgemm_utils.cpp), 0.3 to 200 KiB a call there.
"""

from __future__ import annotations

from dataclasses import dataclass

#: oneDNN aligns each part of a workspace or scratchpad to a page (rnn_utils.cpp set_offsets).
PAGE = 4096
#: oneDNN's scratchpad registry aligns each booking to at least 128 bytes and reserves that
#: alignment on top of the booking (src/common/memory_tracking.hpp registry_t::book).
BOOKING_ALIGN = 128
#: LSTM gates (input, forget, cell, output), ideep::rnn_kind::LSTM in RNN.cpp's RNNParams.
LSTM_GATES = 4
#: Bytes of the accumulation type (f32) oneDNN keeps gradients in.
ACC = 4


def good_ld(dim: int, elem: int) -> int:
    """oneDNN's leading dimension (rnn_utils.cpp get_good_ld): rounded up to 64 bytes, plus
    64 bytes more when a multiple of 256 elements (to avoid 4K aliasing)."""
    ld = -(-dim // (64 // elem)) * (64 // elem)
    return ld + 64 // elem if ld % 256 == 0 else ld


def page_packed(sizes: list[int]) -> int:
    """Bytes of parts laid out one after the other, each starting on a page, as set_offsets'
    `register_space` does; the layout ends page-aligned."""
    offset = 0
    for size in sizes:
        offset = -(-offset // PAGE) * PAGE + size
    return -(-offset // PAGE) * PAGE


@dataclass(frozen=True)
class LSTMLayer:
    """One `mkldnn_rnn_layer` call: a single layer and direction, time-major input."""

    seq_len: int
    batch: int
    input_size: int
    hidden: int
    elem: int
    """Bytes of the input's dtype (4 fp32, 2 bf16); weights and states share it."""
    state_c_elem: int
    """Bytes of the cell state cx's dtype (oneDNN's src_iter_c)."""
    brgemm: bool = False
    """bf16 on a CPU with AVX512-BF16: oneDNN's brgemm kernels (ref_rnn.cpp init_brgemm
    refuses f32 training, so fp32 always takes the reference kernels)."""

    @property
    def gates(self) -> int:
        return LSTM_GATES * self.hidden

    def workspace_bytes(self) -> int:
        """The workspace that training's forward returns and backward reads
        (rnn_utils.hpp set_workspace_sizes; one layer, one direction; is_training)."""
        t, n, i, h, e = self.seq_len, self.batch, self.input_size, self.hidden, self.elem
        states = 2 * (t + 1) * n  # (layers + 1) · (iterations + 1) · minibatch rows
        diff_ld = good_ld(max(i, h), ACC)
        return page_packed([
            t * n * good_ld(self.gates, e) * e,          # ws_gates
            t * n * good_ld(h, e) * e,                   # ws_ht
            states * good_ld(max(i, h), e) * e,          # ws_states_layer (= ws_states_iter)
            states * h * self.state_c_elem,              # ws_states_iter_c (LSTM only)
            states * diff_ld * ACC,                      # ws_diff_states_layer
            states * diff_ld * ACC,                      # ws_diff_states_iter
            states * h * ACC,                            # ws_diff_states_iter_c
        ])

    def scratchpad_bytes(self, *, backward: bool) -> int:
        """The scratchpad ideep allocates for one forward or backward primitive: oneDNN's
        rnn space (set_offsets' scratch parts) plus the pointer arrays init_scratchpad
        books (ref_rnn.cpp), each booking padded by its alignment."""
        t, n, h, e = self.seq_len, self.batch, self.hidden, self.elem
        # scratch_t is f32 forward and the data type backward (ref_rnn.hpp scratch_type).
        scratch_elem = e if backward else ACC
        # The GEMMs over all time steps are merged (rnn_utils.hpp init_conf): forward when
        # the minibatch is under 128, backward always; brgemm never merges.
        merged = not self.brgemm and (backward or n < 128)
        rnn_space = page_packed([
            (t if merged else 1) * n * good_ld(max(h, self.gates), scratch_elem)
            * scratch_elem,                              # scratch_gates
            n * good_ld(h, e) * e,                       # scratch_ht
            n * good_ld(h, ACC) * ACC,                   # scratch_diff_ht (training)
        ])
        pointers = 3 * (8 + BOOKING_ALIGN)               # weights layer, iter, projection
        bias_pointers = 8 * e + BOOKING_ALIGN            # one pointer per bias byte, sic
        return rnn_space + PAGE + pointers + bias_pointers

    def weights_bytes(self, rows: int, *, backward: bool) -> int:
        """One weight matrix (rows = input size, or hidden for the recurrent weights) in the
        layout the primitive asks for, 0 where it is PyTorch's own layout (ideep's
        reorder_if_differ_in copies only then). Forward asks for ldigo, backward for ldgoi
        (PyTorch's layout), each with good leading dimensions (rnn_utils.cpp
        set_good_strides); brgemm asks for blocked layouts."""
        e = self.elem
        if self.brgemm:  # forward ldgOI32o2i; backward blocks the rows by 32 (measured)
            if backward:
                return -(-rows // 32) * 32 * self.gates * e
            return LSTM_GATES * -(-self.hidden // 32) * 32 * -(-rows // 2) * 2 * e
        if not backward:
            return rows * good_ld(self.gates, e) * e
        padded = good_ld(rows, e)
        return 0 if padded == rows else self.gates * padded * e

    def forward_buffers(self) -> list[int]:
        """What one training forward call holds while it runs, beyond its outputs."""
        return [self.gates * self.elem,                  # _shuffle_bias: bias_ih + bias_hh
                self.weights_bytes(self.input_size, backward=False),
                self.weights_bytes(self.hidden, backward=False),
                self.scratchpad_bytes(backward=False)]

    def backward_buffers(self, *, grad_output: str, grad_hy: bool, grad_cy: bool,
                         shared_states: bool) -> list[int]:
        """What one backward call holds while it runs, beyond its outputs.
        grad_output: "contiguous", "strided" (copied by .contiguous()) or "none" (zeros);
        grad_hy/grad_cy: whether those gradients are given (else zeros of the state);
        shared_states: hx and cx share a storage (cx is cloned)."""
        t, n, h, e = self.seq_len, self.batch, self.hidden, self.elem
        sequence, state = t * n * h, n * h
        buffers = [0 if grad_output == "contiguous" else sequence * e,
                   0 if grad_hy else state * e,
                   0 if grad_cy else state * self.state_c_elem,
                   self.gates * e,                       # _shuffle_bias
                   state * self.state_c_elem if shared_states else 0]
        if e != ACC:  # 16-bit input: the gradients are copied to fp32 for oneDNN
            buffers += [sequence * ACC, state * ACC, state * ACC]
        buffers += [self.weights_bytes(self.input_size, backward=True),
                    self.weights_bytes(self.hidden, backward=True),
                    # ideep zero-inits diff weights in ldigo with good strides, and the bias
                    self.input_size * good_ld(self.gates, ACC) * ACC,
                    self.hidden * good_ld(self.gates, ACC) * ACC,
                    self.gates * ACC,
                    self.scratchpad_bytes(backward=True)]
        return [b for b in buffers if b]
