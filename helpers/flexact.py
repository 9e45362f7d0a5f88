"""Flex-Act (placeholder: being implemented this session)."""
from torch import nn


class FlexAct(nn.Module):  # noqa: D101
    pass
