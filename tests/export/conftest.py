from tests.notebooks.conftest import notebook_lake

__all__ = ["notebook_lake"]
