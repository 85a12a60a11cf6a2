"""The compiled validator of traceinsight/schemas/run.schema.json: written by
tools/make_schema_validators.py (fastjsonschema.compile_to_code), never by hand; run it again
after changing the schema."""
# ruff: noqa
# mypy: ignore-errors
# fmt: off
VERSION = "2.22.3"
Decimal = ()   # (json.loads makes no Decimal: see tools/make_schema_validators.py)
import re
from traceinsight.schemas.refused import JsonSchemaValueException, JsonSchemaValuesException


REGEX_PATTERNS = {
    '^(?!\\.\\.?$)[^/\\\\\\u0000]+$': re.compile('^(?!\\.\\.?\\Z)[^/\\\\\\u0000]+\\Z')
}

NoneType = type(None)

def validate_https___traceinsight_dev_schemas_run_schema_json(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', '$id': 'https://traceinsight.dev/schemas/run.schema.json', 'title': 'traceinsight run.json (run folder manifest, schema version 1)', 'description': 'What load reads from run.json; other keys are kept as written. Checked before any figure is shown: a damaged manifest is refused in one line naming the field.', 'type': 'object', 'required': ['schema_version'], 'properties': {'schema_version': {'const': 1}, 'tool': {'type': ['string', 'null']}, 'created_utc': {'type': ['string', 'null']}, 'updated_utc': {'type': ['string', 'null']}, 'command': {'type': ['string', 'null']}, 'skipped_modes': {'type': 'object', 'additionalProperties': {'type': 'string'}}, 'verify': {'type': 'object', 'description': "capture --verify: each finding checked against the mode with its fix applied (checked: rule, mode, fix_mode, fix (the fix in its code's words), claimed_ms, claimed_kind, status, measured_ms, measured_lo, measured_hi, ratio, ratio_lo, ratio_hi; a fixed-signature check also input_signature, input_signature_source, traces and signature_held), the findings it cannot check (left), the modes out of its budget, and the findings checked against more than one fix (several_fixes: rule, mode, fix_modes)", 'required': ['budget_s', 'spent_s', 'rounds', 'checked', 'left', 'out_of_budget']}, 'workload': {'type': ['object', 'null'], 'properties': {'path': {'type': ['string', 'null']}, 'name': {'type': ['string', 'null']}, 'kind': {'type': ['string', 'null']}, 'sha256': {'type': ['string', 'null']}, 'doc': {'type': ['string', 'null']}}}, 'environment': {'type': ['object', 'null']}, 'options': {'type': ['object', 'null']}, 'modes': {'type': ['object', 'null'], 'maxProperties': 10000, 'additionalProperties': {'type': ['object', 'null'], 'properties': {'dir': {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255, 'pattern': '^(?!\\.\\.?$)[^/\\\\\\u0000]+$'}, 'status': {'enum': ['ok', 'failed', 'pending', 'running', 'missing', None]}, 'error': {'type': ['string', 'null']}, 'stderr_tail': {'type': ['string', 'null']}, 'summary': {'type': ['object', 'null']}, 'notes': {'type': ['array', 'null'], 'items': {'type': 'string'}}, 'kind': {'type': 'object', 'properties': {'base': {'type': 'string'}, 'input': {'enum': ['numpy', 'tensor', 'dataset']}, 'flavour': {'enum': ['keras3', 'tf_keras', 'tf1']}, 'backend': {'enum': ['tensorflow', 'jax']}}}, 'wall_s': {'type': ['number', 'null']}}}}}, '$defs': {'mode': {'type': ['object', 'null'], 'properties': {'dir': {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255, 'pattern': '^(?!\\.\\.?$)[^/\\\\\\u0000]+$'}, 'status': {'enum': ['ok', 'failed', 'pending', 'running', 'missing', None]}, 'error': {'type': ['string', 'null']}, 'stderr_tail': {'type': ['string', 'null']}, 'summary': {'type': ['object', 'null']}, 'notes': {'type': ['array', 'null'], 'items': {'type': 'string'}}, 'kind': {'type': 'object', 'properties': {'base': {'type': 'string'}, 'input': {'enum': ['numpy', 'tensor', 'dataset']}, 'flavour': {'enum': ['keras3', 'tf_keras', 'tf1']}, 'backend': {'enum': ['tensorflow', 'jax']}}}, 'wall_s': {'type': ['number', 'null']}}}}}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data__missing_keys = set(['schema_version']) - data.keys()
        if data__missing_keys:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain " + (str(sorted(data__missing_keys)) + " properties"), value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', '$id': 'https://traceinsight.dev/schemas/run.schema.json', 'title': 'traceinsight run.json (run folder manifest, schema version 1)', 'description': 'What load reads from run.json; other keys are kept as written. Checked before any figure is shown: a damaged manifest is refused in one line naming the field.', 'type': 'object', 'required': ['schema_version'], 'properties': {'schema_version': {'const': 1}, 'tool': {'type': ['string', 'null']}, 'created_utc': {'type': ['string', 'null']}, 'updated_utc': {'type': ['string', 'null']}, 'command': {'type': ['string', 'null']}, 'skipped_modes': {'type': 'object', 'additionalProperties': {'type': 'string'}}, 'verify': {'type': 'object', 'description': "capture --verify: each finding checked against the mode with its fix applied (checked: rule, mode, fix_mode, fix (the fix in its code's words), claimed_ms, claimed_kind, status, measured_ms, measured_lo, measured_hi, ratio, ratio_lo, ratio_hi; a fixed-signature check also input_signature, input_signature_source, traces and signature_held), the findings it cannot check (left), the modes out of its budget, and the findings checked against more than one fix (several_fixes: rule, mode, fix_modes)", 'required': ['budget_s', 'spent_s', 'rounds', 'checked', 'left', 'out_of_budget']}, 'workload': {'type': ['object', 'null'], 'properties': {'path': {'type': ['string', 'null']}, 'name': {'type': ['string', 'null']}, 'kind': {'type': ['string', 'null']}, 'sha256': {'type': ['string', 'null']}, 'doc': {'type': ['string', 'null']}}}, 'environment': {'type': ['object', 'null']}, 'options': {'type': ['object', 'null']}, 'modes': {'type': ['object', 'null'], 'maxProperties': 10000, 'additionalProperties': {'type': ['object', 'null'], 'properties': {'dir': {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255, 'pattern': '^(?!\\.\\.?$)[^/\\\\\\u0000]+$'}, 'status': {'enum': ['ok', 'failed', 'pending', 'running', 'missing', None]}, 'error': {'type': ['string', 'null']}, 'stderr_tail': {'type': ['string', 'null']}, 'summary': {'type': ['object', 'null']}, 'notes': {'type': ['array', 'null'], 'items': {'type': 'string'}}, 'kind': {'type': 'object', 'properties': {'base': {'type': 'string'}, 'input': {'enum': ['numpy', 'tensor', 'dataset']}, 'flavour': {'enum': ['keras3', 'tf_keras', 'tf1']}, 'backend': {'enum': ['tensorflow', 'jax']}}}, 'wall_s': {'type': ['number', 'null']}}}}}, '$defs': {'mode': {'type': ['object', 'null'], 'properties': {'dir': {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255, 'pattern': '^(?!\\.\\.?$)[^/\\\\\\u0000]+$'}, 'status': {'enum': ['ok', 'failed', 'pending', 'running', 'missing', None]}, 'error': {'type': ['string', 'null']}, 'stderr_tail': {'type': ['string', 'null']}, 'summary': {'type': ['object', 'null']}, 'notes': {'type': ['array', 'null'], 'items': {'type': 'string'}}, 'kind': {'type': 'object', 'properties': {'base': {'type': 'string'}, 'input': {'enum': ['numpy', 'tensor', 'dataset']}, 'flavour': {'enum': ['keras3', 'tf_keras', 'tf1']}, 'backend': {'enum': ['tensorflow', 'jax']}}}, 'wall_s': {'type': ['number', 'null']}}}}}, rule='required')
        data_keys = set(data.keys())
        if "schema_version" in data_keys:
            data_keys.remove("schema_version")
            data__schemaversion = data["schema_version"]
            if not (isinstance(data__schemaversion, (int, float)) and not isinstance(data__schemaversion, bool) and data__schemaversion == 1):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".schema_version must be same as const definition: 1", value=data__schemaversion, name="" + (name_prefix or "data") + ".schema_version", definition={'const': 1}, rule='const')
        if "tool" in data_keys:
            data_keys.remove("tool")
            data__tool = data["tool"]
            if not isinstance(data__tool, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".tool must be string or null", value=data__tool, name="" + (name_prefix or "data") + ".tool", definition={'type': ['string', 'null']}, rule='type')
        if "created_utc" in data_keys:
            data_keys.remove("created_utc")
            data__createdutc = data["created_utc"]
            if not isinstance(data__createdutc, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".created_utc must be string or null", value=data__createdutc, name="" + (name_prefix or "data") + ".created_utc", definition={'type': ['string', 'null']}, rule='type')
        if "updated_utc" in data_keys:
            data_keys.remove("updated_utc")
            data__updatedutc = data["updated_utc"]
            if not isinstance(data__updatedutc, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".updated_utc must be string or null", value=data__updatedutc, name="" + (name_prefix or "data") + ".updated_utc", definition={'type': ['string', 'null']}, rule='type')
        if "command" in data_keys:
            data_keys.remove("command")
            data__command = data["command"]
            if not isinstance(data__command, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".command must be string or null", value=data__command, name="" + (name_prefix or "data") + ".command", definition={'type': ['string', 'null']}, rule='type')
        if "skipped_modes" in data_keys:
            data_keys.remove("skipped_modes")
            data__skippedmodes = data["skipped_modes"]
            if not isinstance(data__skippedmodes, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".skipped_modes must be object", value=data__skippedmodes, name="" + (name_prefix or "data") + ".skipped_modes", definition={'type': 'object', 'additionalProperties': {'type': 'string'}}, rule='type')
            data__skippedmodes_is_dict = isinstance(data__skippedmodes, dict)
            if data__skippedmodes_is_dict:
                data__skippedmodes_keys = set(data__skippedmodes.keys())
                for data__skippedmodes_key in data__skippedmodes_keys:
                    if data__skippedmodes_key not in []:
                        data__skippedmodes_value = data__skippedmodes.get(data__skippedmodes_key)
                        if not isinstance(data__skippedmodes_value, (str)):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".skipped_modes.{data__skippedmodes_key}".format(**locals()) + " must be string", value=data__skippedmodes_value, name="" + (name_prefix or "data") + ".skipped_modes.{data__skippedmodes_key}".format(**locals()) + "", definition={'type': 'string'}, rule='type')
        if "verify" in data_keys:
            data_keys.remove("verify")
            data__verify = data["verify"]
            if not isinstance(data__verify, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify must be object", value=data__verify, name="" + (name_prefix or "data") + ".verify", definition={'type': 'object', 'description': "capture --verify: each finding checked against the mode with its fix applied (checked: rule, mode, fix_mode, fix (the fix in its code's words), claimed_ms, claimed_kind, status, measured_ms, measured_lo, measured_hi, ratio, ratio_lo, ratio_hi; a fixed-signature check also input_signature, input_signature_source, traces and signature_held), the findings it cannot check (left), the modes out of its budget, and the findings checked against more than one fix (several_fixes: rule, mode, fix_modes)", 'required': ['budget_s', 'spent_s', 'rounds', 'checked', 'left', 'out_of_budget']}, rule='type')
            data__verify_is_dict = isinstance(data__verify, dict)
            if data__verify_is_dict:
                data__verify__missing_keys = set(['budget_s', 'spent_s', 'rounds', 'checked', 'left', 'out_of_budget']) - data__verify.keys()
                if data__verify__missing_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".verify must contain " + (str(sorted(data__verify__missing_keys)) + " properties"), value=data__verify, name="" + (name_prefix or "data") + ".verify", definition={'type': 'object', 'description': "capture --verify: each finding checked against the mode with its fix applied (checked: rule, mode, fix_mode, fix (the fix in its code's words), claimed_ms, claimed_kind, status, measured_ms, measured_lo, measured_hi, ratio, ratio_lo, ratio_hi; a fixed-signature check also input_signature, input_signature_source, traces and signature_held), the findings it cannot check (left), the modes out of its budget, and the findings checked against more than one fix (several_fixes: rule, mode, fix_modes)", 'required': ['budget_s', 'spent_s', 'rounds', 'checked', 'left', 'out_of_budget']}, rule='required')
        if "workload" in data_keys:
            data_keys.remove("workload")
            data__workload = data["workload"]
            if not isinstance(data__workload, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".workload must be object or null", value=data__workload, name="" + (name_prefix or "data") + ".workload", definition={'type': ['object', 'null'], 'properties': {'path': {'type': ['string', 'null']}, 'name': {'type': ['string', 'null']}, 'kind': {'type': ['string', 'null']}, 'sha256': {'type': ['string', 'null']}, 'doc': {'type': ['string', 'null']}}}, rule='type')
            data__workload_is_dict = isinstance(data__workload, dict)
            if data__workload_is_dict:
                data__workload_keys = set(data__workload.keys())
                if "path" in data__workload_keys:
                    data__workload_keys.remove("path")
                    data__workload__path = data__workload["path"]
                    if not isinstance(data__workload__path, (str, NoneType)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".workload.path must be string or null", value=data__workload__path, name="" + (name_prefix or "data") + ".workload.path", definition={'type': ['string', 'null']}, rule='type')
                if "name" in data__workload_keys:
                    data__workload_keys.remove("name")
                    data__workload__name = data__workload["name"]
                    if not isinstance(data__workload__name, (str, NoneType)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".workload.name must be string or null", value=data__workload__name, name="" + (name_prefix or "data") + ".workload.name", definition={'type': ['string', 'null']}, rule='type')
                if "kind" in data__workload_keys:
                    data__workload_keys.remove("kind")
                    data__workload__kind = data__workload["kind"]
                    if not isinstance(data__workload__kind, (str, NoneType)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".workload.kind must be string or null", value=data__workload__kind, name="" + (name_prefix or "data") + ".workload.kind", definition={'type': ['string', 'null']}, rule='type')
                if "sha256" in data__workload_keys:
                    data__workload_keys.remove("sha256")
                    data__workload__sha256 = data__workload["sha256"]
                    if not isinstance(data__workload__sha256, (str, NoneType)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".workload.sha256 must be string or null", value=data__workload__sha256, name="" + (name_prefix or "data") + ".workload.sha256", definition={'type': ['string', 'null']}, rule='type')
                if "doc" in data__workload_keys:
                    data__workload_keys.remove("doc")
                    data__workload__doc = data__workload["doc"]
                    if not isinstance(data__workload__doc, (str, NoneType)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".workload.doc must be string or null", value=data__workload__doc, name="" + (name_prefix or "data") + ".workload.doc", definition={'type': ['string', 'null']}, rule='type')
        if "environment" in data_keys:
            data_keys.remove("environment")
            data__environment = data["environment"]
            if not isinstance(data__environment, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".environment must be object or null", value=data__environment, name="" + (name_prefix or "data") + ".environment", definition={'type': ['object', 'null']}, rule='type')
        if "options" in data_keys:
            data_keys.remove("options")
            data__options = data["options"]
            if not isinstance(data__options, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".options must be object or null", value=data__options, name="" + (name_prefix or "data") + ".options", definition={'type': ['object', 'null']}, rule='type')
        if "modes" in data_keys:
            data_keys.remove("modes")
            data__modes = data["modes"]
            if not isinstance(data__modes, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".modes must be object or null", value=data__modes, name="" + (name_prefix or "data") + ".modes", definition={'type': ['object', 'null'], 'maxProperties': 10000, 'additionalProperties': {'type': ['object', 'null'], 'properties': {'dir': {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255, 'pattern': '^(?!\\.\\.?$)[^/\\\\\\u0000]+$'}, 'status': {'enum': ['ok', 'failed', 'pending', 'running', 'missing', None]}, 'error': {'type': ['string', 'null']}, 'stderr_tail': {'type': ['string', 'null']}, 'summary': {'type': ['object', 'null']}, 'notes': {'type': ['array', 'null'], 'items': {'type': 'string'}}, 'kind': {'type': 'object', 'properties': {'base': {'type': 'string'}, 'input': {'enum': ['numpy', 'tensor', 'dataset']}, 'flavour': {'enum': ['keras3', 'tf_keras', 'tf1']}, 'backend': {'enum': ['tensorflow', 'jax']}}}, 'wall_s': {'type': ['number', 'null']}}}}, rule='type')
            data__modes_is_dict = isinstance(data__modes, dict)
            if data__modes_is_dict:
                data__modes_len = len(data__modes)
                if data__modes_len > 10000:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".modes must contain less than or equal to 10000 properties", value=data__modes, name="" + (name_prefix or "data") + ".modes", definition={'type': ['object', 'null'], 'maxProperties': 10000, 'additionalProperties': {'type': ['object', 'null'], 'properties': {'dir': {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255, 'pattern': '^(?!\\.\\.?$)[^/\\\\\\u0000]+$'}, 'status': {'enum': ['ok', 'failed', 'pending', 'running', 'missing', None]}, 'error': {'type': ['string', 'null']}, 'stderr_tail': {'type': ['string', 'null']}, 'summary': {'type': ['object', 'null']}, 'notes': {'type': ['array', 'null'], 'items': {'type': 'string'}}, 'kind': {'type': 'object', 'properties': {'base': {'type': 'string'}, 'input': {'enum': ['numpy', 'tensor', 'dataset']}, 'flavour': {'enum': ['keras3', 'tf_keras', 'tf1']}, 'backend': {'enum': ['tensorflow', 'jax']}}}, 'wall_s': {'type': ['number', 'null']}}}}, rule='maxProperties')
                data__modes_keys = set(data__modes.keys())
                for data__modes_key in data__modes_keys:
                    if data__modes_key not in []:
                        data__modes_value = data__modes.get(data__modes_key)
                        validate_https___traceinsight_dev_schemas_run_schema_json___defs_mode(data__modes_value, custom_formats, (name_prefix or "data") + ".modes.{data__modes_key}".format(**locals()))
    return data

def validate_https___traceinsight_dev_schemas_run_schema_json___defs_mode(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict, NoneType)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object or null", value=data, name="" + (name_prefix or "data") + "", definition={'type': ['object', 'null'], 'properties': {'dir': {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255, 'pattern': '^(?!\\.\\.?$)[^/\\\\\\u0000]+$'}, 'status': {'enum': ['ok', 'failed', 'pending', 'running', 'missing', None]}, 'error': {'type': ['string', 'null']}, 'stderr_tail': {'type': ['string', 'null']}, 'summary': {'type': ['object', 'null']}, 'notes': {'type': ['array', 'null'], 'items': {'type': 'string'}}, 'kind': {'type': 'object', 'properties': {'base': {'type': 'string'}, 'input': {'enum': ['numpy', 'tensor', 'dataset']}, 'flavour': {'enum': ['keras3', 'tf_keras', 'tf1']}, 'backend': {'enum': ['tensorflow', 'jax']}}}, 'wall_s': {'type': ['number', 'null']}}}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data_keys = set(data.keys())
        if "dir" in data_keys:
            data_keys.remove("dir")
            data__dir = data["dir"]
            if not isinstance(data__dir, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".dir must be string or null", value=data__dir, name="" + (name_prefix or "data") + ".dir", definition={'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255, 'pattern': '^(?!\\.\\.?$)[^/\\\\\\u0000]+$'}, rule='type')
            if isinstance(data__dir, str):
                data__dir_len = len(data__dir)
                if data__dir_len < 1:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".dir must be longer than or equal to 1 characters", value=data__dir, name="" + (name_prefix or "data") + ".dir", definition={'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255, 'pattern': '^(?!\\.\\.?$)[^/\\\\\\u0000]+$'}, rule='minLength')
                if data__dir_len > 255:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".dir must be shorter than or equal to 255 characters", value=data__dir, name="" + (name_prefix or "data") + ".dir", definition={'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255, 'pattern': '^(?!\\.\\.?$)[^/\\\\\\u0000]+$'}, rule='maxLength')
                if not REGEX_PATTERNS['^(?!\\.\\.?$)[^/\\\\\\u0000]+$'].search(data__dir):
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".dir must match pattern ^(?!\\.\\.?$)[^/\\\\\\u0000]+$", value=data__dir, name="" + (name_prefix or "data") + ".dir", definition={'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255, 'pattern': '^(?!\\.\\.?$)[^/\\\\\\u0000]+$'}, rule='pattern')
        if "status" in data_keys:
            data_keys.remove("status")
            data__status = data["status"]
            if not (isinstance(data__status, str) and data__status == 'ok' or isinstance(data__status, str) and data__status == 'failed' or isinstance(data__status, str) and data__status == 'pending' or isinstance(data__status, str) and data__status == 'running' or isinstance(data__status, str) and data__status == 'missing' or data__status is None):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".status must be one of ['ok', 'failed', 'pending', 'running', 'missing', None]", value=data__status, name="" + (name_prefix or "data") + ".status", definition={'enum': ['ok', 'failed', 'pending', 'running', 'missing', None]}, rule='enum')
        if "error" in data_keys:
            data_keys.remove("error")
            data__error = data["error"]
            if not isinstance(data__error, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".error must be string or null", value=data__error, name="" + (name_prefix or "data") + ".error", definition={'type': ['string', 'null']}, rule='type')
        if "stderr_tail" in data_keys:
            data_keys.remove("stderr_tail")
            data__stderrtail = data["stderr_tail"]
            if not isinstance(data__stderrtail, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".stderr_tail must be string or null", value=data__stderrtail, name="" + (name_prefix or "data") + ".stderr_tail", definition={'type': ['string', 'null']}, rule='type')
        if "summary" in data_keys:
            data_keys.remove("summary")
            data__summary = data["summary"]
            if not isinstance(data__summary, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".summary must be object or null", value=data__summary, name="" + (name_prefix or "data") + ".summary", definition={'type': ['object', 'null']}, rule='type')
        if "notes" in data_keys:
            data_keys.remove("notes")
            data__notes = data["notes"]
            if not isinstance(data__notes, (list, tuple, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".notes must be array or null", value=data__notes, name="" + (name_prefix or "data") + ".notes", definition={'type': ['array', 'null'], 'items': {'type': 'string'}}, rule='type')
            data__notes_is_list = isinstance(data__notes, (list, tuple))
            if data__notes_is_list:
                data__notes_len = len(data__notes)
                for data__notes_x, data__notes_item in enumerate(data__notes):
                    if not isinstance(data__notes_item, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".notes[{data__notes_x}]".format(**locals()) + " must be string", value=data__notes_item, name="" + (name_prefix or "data") + ".notes[{data__notes_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
        if "kind" in data_keys:
            data_keys.remove("kind")
            data__kind = data["kind"]
            if not isinstance(data__kind, (dict)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".kind must be object", value=data__kind, name="" + (name_prefix or "data") + ".kind", definition={'type': 'object', 'properties': {'base': {'type': 'string'}, 'input': {'enum': ['numpy', 'tensor', 'dataset']}, 'flavour': {'enum': ['keras3', 'tf_keras', 'tf1']}, 'backend': {'enum': ['tensorflow', 'jax']}}}, rule='type')
            data__kind_is_dict = isinstance(data__kind, dict)
            if data__kind_is_dict:
                data__kind_keys = set(data__kind.keys())
                if "base" in data__kind_keys:
                    data__kind_keys.remove("base")
                    data__kind__base = data__kind["base"]
                    if not isinstance(data__kind__base, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".kind.base must be string", value=data__kind__base, name="" + (name_prefix or "data") + ".kind.base", definition={'type': 'string'}, rule='type')
                if "input" in data__kind_keys:
                    data__kind_keys.remove("input")
                    data__kind__input = data__kind["input"]
                    if not (isinstance(data__kind__input, str) and data__kind__input == 'numpy' or isinstance(data__kind__input, str) and data__kind__input == 'tensor' or isinstance(data__kind__input, str) and data__kind__input == 'dataset'):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".kind.input must be one of ['numpy', 'tensor', 'dataset']", value=data__kind__input, name="" + (name_prefix or "data") + ".kind.input", definition={'enum': ['numpy', 'tensor', 'dataset']}, rule='enum')
                if "flavour" in data__kind_keys:
                    data__kind_keys.remove("flavour")
                    data__kind__flavour = data__kind["flavour"]
                    if not (isinstance(data__kind__flavour, str) and data__kind__flavour == 'keras3' or isinstance(data__kind__flavour, str) and data__kind__flavour == 'tf_keras' or isinstance(data__kind__flavour, str) and data__kind__flavour == 'tf1'):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".kind.flavour must be one of ['keras3', 'tf_keras', 'tf1']", value=data__kind__flavour, name="" + (name_prefix or "data") + ".kind.flavour", definition={'enum': ['keras3', 'tf_keras', 'tf1']}, rule='enum')
                if "backend" in data__kind_keys:
                    data__kind_keys.remove("backend")
                    data__kind__backend = data__kind["backend"]
                    if not (isinstance(data__kind__backend, str) and data__kind__backend == 'tensorflow' or isinstance(data__kind__backend, str) and data__kind__backend == 'jax'):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".kind.backend must be one of ['tensorflow', 'jax']", value=data__kind__backend, name="" + (name_prefix or "data") + ".kind.backend", definition={'enum': ['tensorflow', 'jax']}, rule='enum')
        if "wall_s" in data_keys:
            data_keys.remove("wall_s")
            data__walls = data["wall_s"]
            if not isinstance(data__walls, (int, float, Decimal, NoneType)) or isinstance(data__walls, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".wall_s must be number or null", value=data__walls, name="" + (name_prefix or "data") + ".wall_s", definition={'type': ['number', 'null']}, rule='type')
    return data


SCHEMA_SHA256 = 'df033efe7979a0235c174dc471eef216cc85c4659f1d53f73983a86ea9694f97'
validate = validate_https___traceinsight_dev_schemas_run_schema_json
