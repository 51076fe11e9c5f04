"""Modules, params and configs: `Module`, `Param`, `ParamId`, `config`."""

from burn.module.base import Module, ModuleMapper, ModuleVisitor
from burn.module.config import config, is_config
from burn.module.param import Param, ParamId

__all__ = ["Module", "ModuleMapper", "ModuleVisitor", "Param", "ParamId", "config", "is_config"]
