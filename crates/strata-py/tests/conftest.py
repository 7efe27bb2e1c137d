import pytest

import strata


@pytest.fixture
def db(tmp_path):
    with strata.Db(str(tmp_path / "db")) as db:
        yield db
