pytest_plugins = ["tests.fixtures_core"]
