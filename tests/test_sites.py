"""Sites are named profiles with their own keys; nothing configured means the sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from commerce_reports.config import Settings
from commerce_reports.errors import ConfigurationError
from commerce_reports.sites import SiteProfile, configured_sites, select_sites


def _configured() -> dict[str, SiteProfile]:
    """The sites the environment (over `.env`) names, read now."""
    return configured_sites(Settings.from_env())


def test_nothing_configured_means_no_sites_and_the_entry_points_use_the_sandbox() -> None:
    assert _configured() == {}
    from commerce_reports.embedded import available_sites

    sites = available_sites(Settings.from_env())
    assert sorted(sites) == ["alpha", "beta"]
    assert all(p.sandbox and p.base_url.startswith("http://127.0.0.1:") for p in sites.values())


def test_one_key_is_one_site_named_default_or_as_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY", "key-of-the-one-site")
    monkeypatch.setenv("COMMERCE_REPORTS_BASE_URL", "https://api.example.com")
    assert list(_configured()) == ["default"]
    monkeypatch.setenv("COMMERCE_REPORTS_SITE", "recipes")
    (profile,) = _configured().values()
    assert profile.name == "recipes" and profile.secret_key.reveal() == "key-of-the-one-site"
    assert "key-of-the-one-site" not in repr(profile)


def test_named_keys_make_one_site_each(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY_RECIPES", "recipes-key-123")
    monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY_GADGETS", "gadgets-key-456")
    monkeypatch.setenv("COMMERCE_REPORTS_BASE_URL", "https://api.example.com")
    sites = _configured()
    assert sorted(sites) == ["gadgets", "recipes"]
    assert sites["gadgets"].secret_key.reveal() == "gadgets-key-456"
    assert list(select_sites("recipes", _configured)) == ["recipes"]
    with pytest.raises(
        ConfigurationError, match="unknown site 'cooking'; configured sites: gadgets, recipes"
    ):
        select_sites(["cooking"], _configured)


def test_a_named_key_beside_the_one_key_is_refused_rather_than_its_site_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The settings table said a named key adds "one more site": it replaced the one key's site,
    and the next sync stored only the new one, saying nothing of the first."""
    monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY", "key-of-the-first-site")
    monkeypatch.setenv("COMMERCE_REPORTS_SITE", "alpha")
    monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY_BETA", "key-of-the-second-site")
    monkeypatch.setenv("COMMERCE_REPORTS_BASE_URL", "https://api.example.com")
    with pytest.raises(ConfigurationError, match=r"site \(alpha\) would be synced no more") as refused:
        _configured()
    assert "COMMERCE_REPORTS_SECRET_KEY_ALPHA" in str(refused.value)
    assert "key-of-the" not in str(refused.value)


def test_a_sites_file_names_sites_and_the_variables_holding_their_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RECIPES_KEY", "recipes-key-789")
    (tmp_path / "sites.toml").write_text(
        '[sites.recipes]\nsecret_key_env = "RECIPES_KEY"\nbase_url = "https://eu.api.example.com"\n'
    )
    (profile,) = _configured().values()
    assert profile.name == "recipes" and profile.base_url == "https://eu.api.example.com"
    assert profile.secret_key.reveal() == "recipes-key-789"


@pytest.mark.parametrize(
    "text, message",
    [
        ('[sites.recipes]\nsecret_key = "abc"\nsecret_key_env = "X"\n', "must not hold the key itself"),
        ("[sites.recipes]\nbase_url = 'https://a.example'\n", "needs secret_key_env"),
        (
            '[sites.recipes]\nsecret_key_env = "MISSING_VARIABLE"\nbase_url = "https://a.example"\n',
            "is not set",
        ),
        ('[sites."Recipes!"]\nsecret_key_env = "X"\n', "not a usable site name"),
        ("not toml at all [", "not readable TOML"),
        ('[sites.recipes]\nsecret_key_env = "X"\ndialect = "openapi"\n', "is not a dialect"),
        (
            '[sites.recipes]\nsecret_key_env = "X"\nmax_body_mb = "lots"\n',
            "max_body_mb: 'lots' is not a positive number",
        ),
        (
            '[sites.recipes]\nsecret_key_env = "X"\nbase_ur = "https://a.example"\n',
            "unknown setting 'base_ur'",
        ),
    ],
)
def test_a_bad_sites_file_says_what_to_fix(
    text: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("X", "some-site-key-123")
    (tmp_path / "sites.toml").write_text(text)
    with pytest.raises(ConfigurationError, match=message):  # always the configuration's error
        _configured()


def test_a_sites_file_sets_dialect_and_limits_per_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RECIPES_KEY", "recipes-key-123")
    (tmp_path / "sites.toml").write_text(
        '[sites.recipes]\nsecret_key_env = "RECIPES_KEY"\nbase_url = "https://a.example/v1/"\n'
        'dialect = "published"\nmax_body_mb = 64\nrequest_deadline = 30\n'
    )
    (profile,) = _configured().values()
    assert profile.dialect == "published" and profile.limits.max_body_bytes == 64 * 2**20
    assert profile.limits.request_deadline == 30 and profile.limits.max_retry_wait == 900


@pytest.mark.parametrize("selection", [123, [1, 2], {"alpha": 1}, []])
def test_a_site_selection_of_the_wrong_kind_is_a_clear_error(selection: object) -> None:
    import commerce_reports as cr

    with pytest.raises(cr.ValidationError, match="sites: "):  # bad input, not a setting
        cr.sync(sites=selection)  # type: ignore[arg-type]


def test_a_key_without_a_base_url_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY", "key-of-the-one-site")
    with pytest.raises(ConfigurationError, match="COMMERCE_REPORTS_BASE_URL"):
        _configured()
