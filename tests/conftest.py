pytest_plugins = ["tests.fixtures_core", "tests.fixtures_clis"]
