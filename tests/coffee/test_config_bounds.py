"""Bad user input to ``econbench coffee run``: a short error, exit 2, before anything is written.

Every config below validated before (and then crashed mid-run with a traceback, leaving an
orphan run directory, or ran with nonsense such as negative inventory values).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from econbench.cli import app
from econbench.coffee.config import ConfigError, EconomyConfig
from econbench.runs import store
from econbench.runs.coffee.config import RunConfig, load_config

runner = CliRunner()

ROASTER = (
    '[economy.roaster]\nstart_item = "roasted_coffee_kg"\nstart_qty = 30\n'
    "start_unit_cost = 5.88\ninventory_cap = 120\nopex_per_day = 30\n"
)
CEILINGS = "green_specialty_kg = 60.6\nroasted_coffee_kg = 30.0\nroasted_specialty_kg = 80.0\n"

BAD_CONFIGS = {
    "cash-inf": (ROASTER + "cash = inf\n", "economy.roaster.cash"),
    "cash-nan": (ROASTER + "cash = nan\n", "economy.roaster.cash"),
    "cash-huge": (ROASTER + "cash = 1e300\n", "economy.roaster.cash"),
    "opex-negative": (ROASTER.replace("opex_per_day = 30", "opex_per_day = -1"), "opex_per_day"),
    "start-over-cap": (ROASTER.replace("start_qty = 30", "start_qty = 500"), "inventory_cap"),
    "festival-factor-inf": ("[economy]\nfestival_factor = inf\n", "festival_factor"),
    "festival-days-order": ("[economy]\nfestival_days = [50, 40]\n", "festival_days"),
    "festival-days-negative": ("[economy]\nfestival_days = [-3, 40]\n", "festival_days"),
    "loyalty-negative": ("[economy]\nloyalty_range = [5.0, -5.0]\n", "loyalty_range"),
    "loyalty-order": ("[economy]\nloyalty_range = [1.2, 0.9]\n", "loyalty_range"),
    "retail-price-nan": (
        "[economy.start_retail_prices]\nroasted_coffee_kg = nan\nroasted_specialty_kg = 50.0\n",
        "start_retail_prices.roasted_coffee_kg",
    ),
    "retail-price-over-max": (
        "[economy]\nmax_price_per_kg = 40.0\n",
        "start_retail_prices.roasted_specialty_kg",
    ),
    "writedown-ceiling-negative": (
        "[economy.writedown_ceiling]\ngreen_coffee_kg = -1\n" + CEILINGS,
        "writedown_ceiling.green_coffee_kg",
    ),
    "spoilage-over-one": ("[economy]\nspoilage_rate = 1.5\n", "spoilage_rate"),
    "late-fee-inf": ("[economy]\nlate_fee_rate = inf\n", "late_fee_rate"),
    "noise-nan": ("[economy]\ndemand_noise_sd = nan\n", "demand_noise_sd"),
    "demand-cap-inf": ("[economy]\ndemand_cap_per_80 = inf\n", "demand_cap_per_80"),
    "ship-loss-negative": ("[economy]\nship_loss_prob = -0.1\n", "ship_loss_prob"),
    "day-start-past-midnight": ("[economy]\nday_start_minute = 5000\n", "day_start_minute"),
    "terms-huge": ("[economy]\nmax_payment_terms_days = 100000000\n", "max_payment_terms_days"),
    "max-price-zero": ("[economy]\nmax_price_per_kg = 0.0\n", "max_price_per_kg"),
    "body-chars-huge": ("[economy]\nmax_body_chars = 1000000000\n", "max_body_chars"),
    "production-cost-inf": (
        "[economy.production.green_coffee_kg]\nunit_cost = inf\ndaily_cap = 30\nlag_days = 2\n"
        "[economy.production.green_specialty_kg]\nunit_cost = 10.0\ndaily_cap = 10\n"
        "lag_days = 2\n",
        "unit_cost",
    ),
    "roast-yield-nan": (
        "[economy.roasting.green_coffee_kg]\nlabour_per_kg = 3.0\nyield = nan\n"
        "[economy.roasting.green_specialty_kg]\nlabour_per_kg = 5.0\nyield = 0.82\n",
        "yield",
    ),
    "demand-base-inf": (
        "[economy.demand.roasted_coffee_kg]\nreservation_price = 30.0\nbase_demand = inf\n"
        "floor_kg = 5\n[economy.demand.roasted_specialty_kg]\nreservation_price = 80.0\n"
        "base_demand = 15.0\nfloor_kg = 1\n",
        "base_demand",
    ),
    "days-zero": ("[run]\ndays = 0\n", "days"),
    "seed-negative": ("[run]\nseed = -1\n", "seed"),
    "not-toml": ("[economy\nspoilage_rate = 0.1\n", "not valid TOML"),
    "unknown-table-in-brackets": ("[foo]\nx = 1\n", "expected [run], [agents]"),
}


def error_line(result) -> str:
    """The command's stderr, which must be exactly one ``error: …`` line."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    return lines[0]


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_bad_config_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, name: str) -> None:
    text, key = BAD_CONFIGS[name]
    config = tmp_path / "bad.toml"
    config.write_text(text)
    out = tmp_path / "runs" / "r"
    short = [] if "[run]" in text else ["--days", "3"]  # were it accepted, keep it short
    result = runner.invoke(
        app, ["coffee", "run", "--config", str(config), *short, "--out", str(out)]
    )
    assert result.exit_code == 2, result.output
    assert key in error_line(result)
    assert "Traceback" not in result.output
    assert not (tmp_path / "runs").exists(), "nothing may be written for a bad config"


@pytest.mark.parametrize("case", ["directory", "missing", "binary"])
def test_bad_config_file_is_one_line_exit_2(tmp_path: Path, case: str) -> None:
    path = tmp_path / "config.toml"
    if case == "directory":
        path.mkdir()
    elif case == "binary":
        path.write_bytes(b"\xff\xfe\x00garbage")
    out = tmp_path / "out"
    result = runner.invoke(app, ["coffee", "run", "--config", str(path), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert str(path) in error_line(result)
    assert not out.exists()


def test_an_unreadable_config_file_is_one_line(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[run]\ndays = 3\n")

    real_open = os.open

    def denied(file, flags, *args, **kwargs):
        if Path(file) == path:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)  # root reads any file: simulate it
    with pytest.raises(ConfigError, match=r"cannot read config file .*Permission denied"):
        load_config(path)


def test_out_under_a_file_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = runner.invoke(
        app, ["coffee", "run", "--days", "2", "--out", str(blocker / "run"), "--quiet"]
    )
    assert result.exit_code == 2, result.output
    assert "is not a directory" in error_line(result)
    assert blocker.read_text() == "x"


def test_out_on_a_read_only_file_system(tmp_path: Path, monkeypatch) -> None:
    real_access = os.access

    def access(path, mode, **kwargs):
        if Path(path) == tmp_path and mode & os.W_OK:
            return False  # as os.access answers on a read-only mount (EROFS), even for root
        return real_access(path, mode, **kwargs)

    monkeypatch.setattr(store.os, "access", access)
    out = tmp_path / "a" / "run"
    result = runner.invoke(app, ["coffee", "run", "--days", "2", "--out", str(out), "--quiet"])
    assert result.exit_code == 2, result.output
    assert "not writable" in error_line(result)
    assert not (tmp_path / "a").exists()


def test_out_on_a_full_file_system(tmp_path: Path, monkeypatch) -> None:
    real = os.statvfs(tmp_path)

    class Full:
        f_bavail = 3
        f_frsize = real.f_frsize

    monkeypatch.setattr(store.os, "statvfs", lambda path: Full())
    out = tmp_path / "run"
    result = runner.invoke(app, ["coffee", "run", "--days", "2", "--out", str(out), "--quiet"])
    assert result.exit_code == 2, result.output
    assert "MiB free" in error_line(result)
    assert not out.exists()


def test_a_failed_first_write_removes_the_directory_it_created(tmp_path: Path, monkeypatch):
    """ENOSPC or EROFS on the first file: a short error and no orphan directory."""

    def write_json(path, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("econbench.runs.coffee.run.write_json", write_json)
    out = tmp_path / "new" / "run"
    result = runner.invoke(app, ["coffee", "run", "--days", "2", "--out", str(out), "--quiet"])
    assert result.exit_code == 2, result.output
    assert "No space left on device" in error_line(result)
    assert not (tmp_path / "new").exists()


def test_every_numeric_field_has_a_finite_range() -> None:
    """Walk the config models: no number may be left unbounded above or below."""
    from pydantic import BaseModel

    def bounded(info) -> bool:
        meta = {type(m).__name__ for m in info.metadata}
        has_low = bool(meta & {"Ge", "Gt"})
        has_high = bool(meta & {"Le", "Lt"})
        return has_low and has_high

    unbounded = []

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, info in model.model_fields.items():
            where = f"{prefix}{name}"
            ann = info.annotation
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                walk(ann, f"{where}.")
            elif ann in (int, float) and not bounded(info):
                unbounded.append(where)

    walk(EconomyConfig, "economy.")
    walk(RunConfig, "")
    for field in ("festival_days", "loyalty_range", "start_retail_prices", "writedown_ceiling"):
        assert field in EconomyConfig.model_fields
    assert unbounded == []


def test_the_shipped_defaults_still_validate() -> None:
    assert RunConfig().economy == EconomyConfig()
    assert load_config(None).days == 90


def test_a_key_pasted_as_api_key_env_is_not_printed_back(tmp_path: Path) -> None:
    # The model settings refuse it without echoing it; the config's one-line error, which
    # quotes each bad value, must not quote this one either.
    secret = "sk-proj-Zq8" + "x" * 24 + "9fK2"
    config = tmp_path / "bad.toml"
    config.write_text(
        "[run]\ndays = 2\n\n[agents]\nroaster_A = 'openai-compatible/m'\n\n"
        f"[models.'openai-compatible/m']\napi_key_env = '{secret}'\n"
        "base_url = 'http://127.0.0.1:9/v1'\n"
    )
    out = tmp_path / "out"
    result = runner.invoke(app, ["coffee", "run", "--config", str(config), "--out", str(out)])
    assert result.exit_code == 2, result.output
    line = error_line(result)
    assert "api_key_env" in line and "NAME of an environment variable" in line
    assert secret not in result.output and secret[:12] not in result.output
    assert not out.exists()
