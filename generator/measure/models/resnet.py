"""ResNet-50 image classifier, built from code.

The architecture is torchvision's `resnet50` (ResNet v1.5: the stride of a downsampling
bottleneck sits on its 3×3 convolution, not on the first 1×1), so `resnet50` has torchvision's
25,557,032 parameters, with torchvision's Kaiming initialisation. Nothing is downloaded and
torchvision is not needed.

For this tool a vision model reads `seq_len` as the IMAGE SIDE: a batch is `batch_size` RGB
images of seq_len × seq_len pixels. The top-level children are `stem`, `layers` (the 16
bottleneck blocks in one `nn.ModuleList`, so `checkpoint_layers` recomputes each block) and
`head`, so the profiler can attribute activations per block; torchvision nests the blocks in
four `layerN` Sequentials instead. `stem` and `head` are plain modules, not `nn.Sequential`,
because the tracker expands Sequentials into their children.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn

from generator.measure.models.transformer_parts import seeded_generator
from generator.measure.training.workload import Workload

#: Seed of every batch, so that two runs see identical inputs.
BATCH_SEED = 0
#: Colour channels of an input image.
IMAGE_CHANNELS = 3


@dataclass(frozen=True)
class ResNetConfig:
    """The hyper-parameters of a bottleneck ResNet; defaults are ResNet-50."""

    blocks_per_stage: tuple[int, ...] = (3, 4, 6, 3)
    """Bottleneck blocks in each stage; (3, 4, 6, 3) is ResNet-50, (3, 4, 23, 3) ResNet-101."""
    base_width: int = 64
    """Inner (3×3) width of the first stage; each later stage doubles it (64/128/256/512)."""
    expansion: int = 4
    """A block's output width is `expansion` times its inner width (256/512/1024/2048)."""
    stem_width: int = 64
    """Channels of the 7×7 stride-2 stem convolution."""
    num_classes: int = 1000
    """Outputs of the final fully connected layer (ImageNet's 1000 classes)."""
    batch_norm_eps: float = 1e-5
    """BatchNorm's epsilon (PyTorch's default, as torchvision)."""
    batch_norm_momentum: float = 0.1
    """BatchNorm's running-statistics momentum (PyTorch's default, as torchvision)."""
    zero_init_residual: bool = False
    """Start each block's last BatchNorm at zero scale (torchvision's option, off by default)."""
    min_image_side: int = 32
    """Smallest image side accepted: the network downsamples by 32 before its average pool."""

    def __post_init__(self) -> None:
        if not self.blocks_per_stage or any(n < 1 for n in self.blocks_per_stage):
            raise ValueError(
                f"blocks_per_stage must be positive counts; got {self.blocks_per_stage}"
            )


RESNET50 = ResNetConfig()


def _batch_norm(config: ResNetConfig, channels: int) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(channels, eps=config.batch_norm_eps, momentum=config.batch_norm_momentum)


class Stem(nn.Module):
    """7×7 stride-2 convolution -> BatchNorm -> ReLU -> 3×3 stride-2 max-pool (side / 4)."""

    def __init__(self, config: ResNetConfig) -> None:
        super().__init__()
        self.conv = nn.Conv2d(IMAGE_CHANNELS, config.stem_width, kernel_size=7, stride=2,
                              padding=3, bias=False)
        self.bn = _batch_norm(config, config.stem_width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.maxpool(self.relu(self.bn(self.conv(images))))


class Bottleneck(nn.Module):
    """1×1 reduce -> 3×3 (carries the stride, v1.5) -> 1×1 expand, each with BatchNorm;
    the shortcut is a strided 1×1 conv + BatchNorm where the shape changes; ReLU after the sum."""

    def __init__(self, config: ResNetConfig, in_channels: int, width: int, stride: int) -> None:
        super().__init__()
        out_channels = width * config.expansion
        self.conv1 = nn.Conv2d(in_channels, width, kernel_size=1, bias=False)
        self.bn1 = _batch_norm(config, width)
        self.conv2 = nn.Conv2d(width, width, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn2 = _batch_norm(config, width)
        self.conv3 = nn.Conv2d(width, out_channels, kernel_size=1, bias=False)
        self.bn3 = _batch_norm(config, out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.downsample: nn.Module | None = None
        if stride != 1 or in_channels != out_channels:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=stride, bias=False),
                _batch_norm(config, out_channels),
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += identity  # in place, as torchvision: the sum reuses bn3's output
        return self.relu(out)


class Head(nn.Module):
    """Global average pool -> flatten -> fully connected layer to the class logits."""

    def __init__(self, config: ResNetConfig, in_features: int) -> None:
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(in_features, config.num_classes)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.avgpool(features), 1))


class ResNet(nn.Module):
    """`model(images)` -> logits of shape (batch, num_classes); images are (batch, 3, H, W)."""

    def __init__(self, config: ResNetConfig) -> None:
        super().__init__()
        self.config = config
        self.stem = Stem(config)
        blocks: list[nn.Module] = []
        in_channels = config.stem_width
        for stage, count in enumerate(config.blocks_per_stage):
            width = config.base_width * 2**stage
            for index in range(count):
                stride = 2 if stage > 0 and index == 0 else 1
                blocks.append(Bottleneck(config, in_channels, width, stride))
                in_channels = width * config.expansion
        self.layers = nn.ModuleList(blocks)
        self.head = Head(config, in_channels)
        self._init_weights()

    def _init_weights(self) -> None:
        """torchvision's: Kaiming-normal (fan_out, ReLU) convolutions, BatchNorm at (1, 0),
        the fc layer at nn.Linear's default; optionally zero scale on each block's last BN."""
        for module in self.modules():
            if isinstance(module, nn.Conv2d):
                nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(module, nn.BatchNorm2d):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)
        if self.config.zero_init_residual:
            for block in self.layers:
                nn.init.zeros_(block.bn3.weight)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        hidden = self.stem(images)
        for block in self.layers:
            hidden = block(hidden)
        return self.head(hidden)


def check_image_side(side: int, batch_size: int, config: ResNetConfig) -> None:
    """Raise ValueError (one line) for an image the network cannot train on: a side under
    `min_image_side`, or a batch whose last feature map has one value per channel, which
    training-mode BatchNorm rejects (batch 1 at side 32)."""
    minimum = config.min_image_side
    if side < minimum:
        raise ValueError(
            f"ResNet needs images of at least {minimum}×{minimum} pixels (seq_len is the image "
            f"side for vision models); got seq_len {side}"
        )
    # Every stage after the first halves the side (rounding up), as do the stem's conv and pool.
    final_side = side
    for _ in range(len(config.blocks_per_stage) + 1):
        final_side = -(-final_side // 2)
    if batch_size * final_side * final_side < 2:
        raise ValueError(
            f"ResNet's last BatchNorm sees one value per channel at batch {batch_size} and "
            f"seq_len {side} (training needs more than one); use a larger batch or image side"
        )


def make_image_batch(
    config: ResNetConfig, batch_size: int, seq_len: int, device: torch.device | str
) -> tuple[tuple[torch.Tensor], torch.Tensor]:
    """`batch_size` random RGB images of seq_len × seq_len pixels (standard normal, like
    normalised ImageNet inputs) and random class labels, from a seeded CPU generator."""
    check_image_side(seq_len, batch_size, config)
    generator = seeded_generator(BATCH_SEED)
    images = torch.randn(
        (batch_size, IMAGE_CHANNELS, seq_len, seq_len),
        generator=generator, dtype=torch.float32, device="cpu",
    )
    labels = torch.randint(
        0, config.num_classes, (batch_size,), generator=generator, dtype=torch.int64, device="cpu"
    )
    return (images.to(device),), labels.to(device)


def classification_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the class logits against the labels, averaged over the batch."""
    return F.cross_entropy(logits, labels)


def build_resnet(config: ResNetConfig = RESNET50) -> Workload:
    """A ResNet classification workload in training mode, on the current default device /
    fake mode."""
    model = ResNet(config)
    model.train()
    return Workload(model=model, make_batch=partial(make_image_batch, config),
                    loss_fn=classification_loss)
