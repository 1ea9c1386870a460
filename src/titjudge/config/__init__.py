"""Run configuration: the schema (`schema`), and loading with overrides (`load`)."""

from titjudge.config.load import (
    apply_overrides,
    dump_config,
    format_validation_error,
    load_config,
    validate_config,
)
from titjudge.config.schema import (
    DataConfig,
    DescriberConfig,
    JudgeConfig,
    RunConfig,
    RunSettings,
)
from titjudge.files import load_yaml
from titjudge.models.core.options import ModelOptions, StrictModel

__all__ = [
    "DataConfig",
    "DescriberConfig",
    "JudgeConfig",
    "ModelOptions",
    "RunConfig",
    "RunSettings",
    "StrictModel",
    "apply_overrides",
    "dump_config",
    "format_validation_error",
    "load_config",
    "load_yaml",
    "validate_config",
]
