"""The built-in API groups' types, defaults and validation (kubernetes pkg/apis/<group>):
schema*.py the light schema the strict decoder checks, defaults*.py the defaulting functions,
validation/ the rules in upstream's field-error words. One convention: core, apps and batch
share schema.py and defaults.py; another group's file is named after it (schema_flowcontrol.py,
defaults_services.py, validation/flowcontrol.py).
"""
