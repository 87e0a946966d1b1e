# Mixed-precision training with the current torch.amp API (PyTorch 2.4 and later).
# Runs as is: on a CUDA GPU in bf16 where the GPU supports it, else in fp16 with loss
# scaling; without a GPU, on the CPU in bf16.

import torch
from torch import nn

device = "cuda" if torch.cuda.is_available() else "cpu"
# bf16 has fp32's exponent range and needs no loss scaling; fp16 needs it against gradient
# underflow. GPUs from Ampere on, and recent CPUs, run bf16; older GPUs get fp16.
dtype = torch.bfloat16 if device == "cpu" or torch.cuda.is_bf16_supported() else torch.float16

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
