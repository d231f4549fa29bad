from tests.notebooks.conftest import (
    in_the_lake,
    in_the_published_lake,
    notebook_lake,
    published_notebook_lake,
    vega_bundle_kept,
)

__all__ = [
    "in_the_lake",
    "in_the_published_lake",
    "notebook_lake",
    "published_notebook_lake",
    "vega_bundle_kept",
]
