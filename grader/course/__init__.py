"""The course as data: YAML files -> frozen, validated specs."""
