"""The public names others code against."""

import commerce_reports.sandbox as sandbox


def test_public_api_is_pinned() -> None:
    assert sorted(sandbox.__all__) == sorted(
        [
            "DEMO_SITES",
            "FAST_PACE",
            "DATA_KINDS",
            "FAULT_KINDS",
            "FaultConfig",
            "Incident",
            "ReportsSandbox",
            "RequestRecord",
            "RunningSandbox",
            "SandboxConfig",
            "Site",
            "run_sandbox",
            "serve_sandbox_forever",
        ]
    )
    for name in sandbox.__all__:
        assert getattr(sandbox, name) is not None
    assert sandbox.FAST_PACE == 0.05
    assert [s.name for s in sandbox.DEMO_SITES] == ["alpha", "beta"]
    assert (
        frozenset({"500", "502", "503", "slow", "drop", "truncate", "malformed", "html", "text", "flat"})
        == sandbox.FAULT_KINDS
    )


def test_site_repr_hides_the_key() -> None:
    assert "sandbox-alpha-key" not in repr(sandbox.DEMO_SITES[0])
