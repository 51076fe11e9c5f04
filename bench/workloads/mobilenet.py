"""MobileNetV3-small as a plain ``torch.nn`` constructor (torchvision does not import beside the
pinned torch here, so the model-level bench builds it itself).

The layer table is Table 2 of Howard et al., "Searching for MobileNetV3", ICCV 2019
(arXiv:1905.02244): a 3x3 stem, eleven inverted-residual bottlenecks (expand 1x1, depthwise
kxk, optional squeeze-and-excite, project 1x1; residual when stride 1 and widths match), a 1x1
conv to 576 (with squeeze-and-excite, as the table marks it), global pooling and two 1x1 convs
without batch norm (1024, then the classes). Squeeze-and-excite squeezes to a quarter of the
expanded width (section 5.3) and gates with hard-sigmoid.
"""

from __future__ import annotations

from typing import Any

# (kernel, expanded width, output width, squeeze-and-excite, hard-swish (else ReLU), stride)
SMALL = (
    (3, 16, 16, True, False, 2),
    (3, 72, 24, False, False, 2),
    (3, 88, 24, False, False, 1),
    (5, 96, 40, True, True, 2),
    (5, 240, 40, True, True, 1),
    (5, 240, 40, True, True, 1),
    (5, 120, 48, True, True, 1),
    (5, 144, 48, True, True, 1),
    (5, 288, 96, True, True, 2),
    (5, 576, 96, True, True, 1),
    (5, 576, 96, True, True, 1),
)


def mobilenet_v3_small(torch: Any, classes: int = 1000) -> Any:
    """MobileNetV3-small for 224x224 RGB inputs, PyTorch's default init (seed it before)."""
    nn = torch.nn
    base: Any = nn.Module

    def conv_bn(c_in: int, c_out: int, kernel: int, stride: int, groups: int, act: Any) -> Any:
        layers = [
            nn.Conv2d(c_in, c_out, kernel, stride, kernel // 2, groups=groups, bias=False),
            nn.BatchNorm2d(c_out),
        ]
        return nn.Sequential(*layers, *([act()] if act else []))

    class SqueezeExcite(base):  # type: ignore[misc]
        def __init__(self, width: int) -> None:
            super().__init__()
            squeezed = width // 4
            self.gate = nn.Sequential(
                nn.AdaptiveAvgPool2d(1), nn.Conv2d(width, squeezed, 1), nn.ReLU(),
                nn.Conv2d(squeezed, width, 1), nn.Hardsigmoid(),
            )  # fmt: skip

        def forward(self, x: Any) -> Any:
            return x * self.gate(x)

    class Bottleneck(base):  # type: ignore[misc]
        def __init__(self, c_in: int, row: tuple[int, int, int, bool, bool, int]) -> None:
            super().__init__()
            kernel, expanded, c_out, se, hard_swish, stride = row
            act = nn.Hardswish if hard_swish else nn.ReLU
            layers = [] if expanded == c_in else [conv_bn(c_in, expanded, 1, 1, 1, act)]
            layers.append(conv_bn(expanded, expanded, kernel, stride, expanded, act))
            if se:
                layers.append(SqueezeExcite(expanded))
            layers.append(conv_bn(expanded, c_out, 1, 1, 1, None))
            self.body = nn.Sequential(*layers)
            self.residual = stride == 1 and c_in == c_out

        def forward(self, x: Any) -> Any:
            y = self.body(x)
            return x + y if self.residual else y

    blocks, width = [conv_bn(3, 16, 3, 2, 1, nn.Hardswish)], 16
    for row in SMALL:
        blocks.append(Bottleneck(width, row))
        width = row[2]
    blocks += [conv_bn(width, 576, 1, 1, 1, nn.Hardswish), SqueezeExcite(576)]
    head = [nn.AdaptiveAvgPool2d(1), nn.Conv2d(576, 1024, 1), nn.Hardswish(), nn.Conv2d(1024, classes, 1)]
    return nn.Sequential(*blocks, *head, nn.Flatten(1))
