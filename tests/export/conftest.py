from tests.notebooks.conftest import in_the_lake, notebook_lake

__all__ = ["in_the_lake", "notebook_lake"]
