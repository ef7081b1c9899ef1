pytest_plugins = ["tests.fixtures_hub"]
