"""The typed values a run's metrics produce that both of its files hold: a metric's number
(`Num`: None where undefined, never NaN) and a pairwise judge's position bias, which
metrics.json keeps per variant (`records.run_record.VariantRecord.pairwise`) and summary.json
per judge (`records.summary.PairwiseSummary`)."""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict


def finite_or_none(value: Any) -> Any:
    """None for NaN or an infinity (an undefined metric), a plain number for a numpy one;
    anything else as it is."""
    if hasattr(value, "item") and not isinstance(value, (list, dict)):
        value = value.item()  # numpy scalar
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


#: a metric's value: None where it is undefined (no pairs, constant ranks), never NaN
Num = Annotated[float | None, BeforeValidator(finite_or_none)]


class PositionBias(BaseModel):
    """A pairwise judge's single-order verdicts: how often the first-shown image won a
    decisive one, and how often its two orders agreed (`metrics.pairwise_stats`)."""

    model_config = ConfigDict(extra="allow")

    n_order_verdicts: int = 0
    n_decisive: int = 0
    n_first_wins: int = 0
    n_second_wins: int = 0
    first_position_win_share: Num = None
    position_bias_rate: Num = None
    position_bias_p_value: Num = None
    n_pairs_both_orders: int = 0
    order_agreement_rate: Num = None
    n_order_disagreements: int = 0


__all__ = ["Num", "PositionBias", "finite_or_none"]
