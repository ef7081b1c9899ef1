pytest_plugins = ["tests.fixtures_clis"]
