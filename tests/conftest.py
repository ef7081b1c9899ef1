pytest_plugins = ["tests.fixtures_core", "tests.fixtures_hub", "tests.fixtures_clis", "tests.fixtures_machines"]
