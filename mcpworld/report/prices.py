"""Dollars per million tokens, per model, for the report's cost column.

The defaults are Anthropic's published list prices as of this writing (no network here to re-check);
a run priced otherwise passes its own table: `mcpworld report --prices FILE.json` with the same fields.
Cache writes are the 5-minute cache's price.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel


class Price(BaseModel):
    input: float
    output: float
    cache_write: float
    cache_read: float

    def dollars(self, input_tokens: int, output_tokens: int, cache_write: int, cache_read: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output + cache_write * self.cache_write
                + cache_read * self.cache_read) / 1e6


DEFAULT_PRICES: dict[str, Price] = {
    name: Price(input=i, output=o, cache_write=w, cache_read=r) for name, (i, o, w, r) in {
        "claude-opus-4-5": (5.0, 25.0, 6.25, 0.50),
        "claude-opus-4-1": (15.0, 75.0, 18.75, 1.50),
        "claude-opus-4-0": (15.0, 75.0, 18.75, 1.50),
        "claude-sonnet-4-6": (3.0, 15.0, 3.75, 0.30),
        "claude-sonnet-4-5": (3.0, 15.0, 3.75, 0.30),
        "claude-sonnet-4-0": (3.0, 15.0, 3.75, 0.30),
        "claude-3-7-sonnet-20250219": (3.0, 15.0, 3.75, 0.30),
        "claude-haiku-4-5": (1.0, 5.0, 1.25, 0.10),
        "claude-3-5-haiku-20241022": (0.80, 4.0, 1.0, 0.08),
    }.items()}


def load_prices(path: Path | None = None) -> dict[str, Price]:
    """The default table, overridden and extended by a JSON file {model: {input, output, cache_write, cache_read}}."""
    prices = dict(DEFAULT_PRICES)
    if path is not None:
        try:
            raw = json.loads(path.read_text())
            prices.update({name: Price.model_validate(p) for name, p in raw.items()})
        except (OSError, ValueError) as e:
            raise ValueError(f"{path}: not a price table ({e})") from None
    return prices


def price_for(prices: dict[str, Price], model: str | None) -> Price | None:
    """The price of a model id, also a dated one ('claude-sonnet-4-5-20250929' is 'claude-sonnet-4-5')."""
    if not model:
        return None
    if model in prices:
        return prices[model]
    stems = [k for k in prices if model.startswith(k + "-")]
    return prices[max(stems, key=len)] if stems else None
