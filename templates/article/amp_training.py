"""Mixed-precision training with the current torch.amp API (PyTorch 2.4 and later).

Runs as is: on a CUDA GPU in fp16 with loss scaling, elsewhere on the CPU in bf16.
"""

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
# fp16 needs loss scaling against gradient underflow; bf16 has fp32's exponent range and
# does not. GPUs from Ampere on, and recent CPUs, run bf16.
dtype = torch.float16 if device == "cuda" else torch.bfloat16

model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 10)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)  # state stays fp32
scaler = torch.amp.GradScaler(device, enabled=dtype == torch.float16)
loss_fn = nn.CrossEntropyLoss()

generator = torch.Generator().manual_seed(0)
inputs = torch.randn(64, 512, generator=generator).to(device)
targets = torch.randint(0, 10, (64,), generator=generator).to(device)

for step in range(20):
    # Weights stay fp32; autocast casts them per op (and caches the casts until it exits).
    with torch.amp.autocast(device_type=device, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    scaler.scale(loss).backward()  # backward outside autocast; grads land in fp32 .grad
    scaler.step(optimizer)  # unscales the gradients, skips the step if any is inf/NaN
    scaler.update()
    optimizer.zero_grad(set_to_none=True)  # frees .grad instead of filling it with zeros

print(f"loss after {step + 1} steps: {loss.item():.4f}")
