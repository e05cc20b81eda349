"""Which EC2 instance family this host is (from its DMI product name): a fact of the host, for runs and backends."""

from __future__ import annotations

from pathlib import Path

from neffbench import targets

DMI_PRODUCT = Path("/sys/devices/virtual/dmi/id/product_name")


def instance_family() -> str | None:
    try:
        product = DMI_PRODUCT.read_text(encoding="utf-8").strip().lower()
    except OSError:
        return None
    family = product.split(".")[0]
    return family if family in targets.FAMILIES else None
