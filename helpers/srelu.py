"""S-ReLU (placeholder: being implemented this session)."""
from torch import nn


def srelu(x, delta):  # noqa: D103
    raise NotImplementedError


class SReLU(nn.Module):  # noqa: D101
    pass
