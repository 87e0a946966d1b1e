"""A small convolutional image classifier, built from code: the zoo's CNN that trains for real
on a CPU in a second or two (ResNet-50 needs a GPU for that).

A VGG-style network for CIFAR-sized images: a 3×3 stem, then stages of two 3×3
convolution + BatchNorm + ReLU layers closed by a 2×2 max-pool, then a global average pool and
one fully connected layer. As for ResNet, `seq_len` is the IMAGE SIDE: a batch is
`batch_size` RGB images of seq_len × seq_len pixels. The top-level children are `stem`,
`layers` (the stages in one `nn.ModuleList`, so `checkpoint_layers` recomputes each stage and
the tracker attributes activations per stage) and `head`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn

from generator.measure.models.resnet import classification_loss
from generator.measure.models.transformer_parts import seeded_generator
from generator.measure.training.workload import Workload

#: Seed of every batch, so that two runs see identical inputs.
BATCH_SEED = 0
#: Colour channels of an input image.
IMAGE_CHANNELS = 3


@dataclass(frozen=True)
class ConvNetConfig:
    """The hyper-parameters of the small CNN; defaults are `convnet-small` (1.2M parameters)."""

    stem_width: int = 32
    """Channels of the stem's 3×3 convolution."""
    stage_widths: tuple[int, ...] = (64, 128, 256)
    """Channels of each stage; each stage ends with a 2×2 max-pool that halves the side."""
    num_classes: int = 10
    """Outputs of the final fully connected layer (CIFAR-10's ten classes)."""

    def __post_init__(self) -> None:
        if not self.stage_widths or any(w < 1 for w in self.stage_widths):
            raise ValueError(f"stage_widths must be positive; got {self.stage_widths}")

    @property
    def min_image_side(self) -> int:
        """Each stage halves the side: the last stage's BatchNorm still needs two values a
        channel at batch 1, so its input must be at least 2 × 2 pixels."""
        return 2 ** len(self.stage_widths)


CONVNET_SMALL = ConvNetConfig()


def _conv_bn_relu(in_channels: int, out_channels: int) -> list[nn.Module]:
    return [nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels), nn.ReLU(inplace=True)]


class Stage(nn.Module):
    """conv-BN-ReLU twice, then a 2×2 max-pool."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.body = nn.Sequential(*_conv_bn_relu(in_channels, out_channels),
                                  *_conv_bn_relu(out_channels, out_channels),
                                  nn.MaxPool2d(kernel_size=2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class Stem(nn.Module):
    """One conv-BN-ReLU at full resolution. A plain module, not `nn.Sequential`, because the
    tracker expands top-level Sequentials into their children."""

    def __init__(self, config: ConvNetConfig) -> None:
        super().__init__()
        self.body = nn.Sequential(*_conv_bn_relu(IMAGE_CHANNELS, config.stem_width))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.body(images)


class Head(nn.Module):
    """Global average pool -> flatten -> fully connected layer to the class logits."""

    def __init__(self, in_features: int, num_classes: int) -> None:
        super().__init__()
        self.fc = nn.Linear(in_features, num_classes)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(features, 1), 1))


class ConvNet(nn.Module):
    """`model(images)` -> logits of shape (batch, num_classes); images are (batch, 3, H, W)."""

    def __init__(self, config: ConvNetConfig) -> None:
        super().__init__()
        self.stem = Stem(config)
        widths = (config.stem_width, *config.stage_widths)
        self.layers = nn.ModuleList(Stage(a, b) for a, b in zip(widths, widths[1:]))
        self.head = Head(widths[-1], config.num_classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        hidden = self.stem(images)
        for stage in self.layers:
            hidden = stage(hidden)
        return self.head(hidden)


def make_image_batch(config: ConvNetConfig, batch_size: int, seq_len: int,
                     device: torch.device | str) -> tuple[tuple[torch.Tensor], torch.Tensor]:
    """`batch_size` random RGB images of seq_len × seq_len pixels (standard normal) and random
    class labels, from a seeded CPU generator."""
    if seq_len < config.min_image_side:
        raise ValueError(f"the small CNN needs images of at least {config.min_image_side}×"
                         f"{config.min_image_side} pixels (seq_len is the image side for "
                         f"vision models); got seq_len {seq_len}")
    generator = seeded_generator(BATCH_SEED)
    images = torch.randn((batch_size, IMAGE_CHANNELS, seq_len, seq_len), generator=generator,
                         dtype=torch.float32, device="cpu")
    labels = torch.randint(0, config.num_classes, (batch_size,), generator=generator,
                           dtype=torch.int64, device="cpu")
    return (images.to(device),), labels.to(device)


def build_convnet(config: ConvNetConfig = CONVNET_SMALL) -> Workload:
    """The small CNN's classification workload in training mode, on the current default device
    / fake mode."""
    model = ConvNet(config)
    model.train()
    return Workload(model=model, make_batch=partial(make_image_batch, config),
                    loss_fn=classification_loss)
