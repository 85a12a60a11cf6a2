"""The compiled validator of traceinsight/schemas/timings.schema.json: written by
tools/make_schema_validators.py (fastjsonschema.compile_to_code), never by hand; run it again
after changing the schema."""
# ruff: noqa
# mypy: ignore-errors
# fmt: off
VERSION = "2.22.3"
Decimal = ()   # (json.loads makes no Decimal: see tools/make_schema_validators.py)
from traceinsight.schemas.refused import JsonSchemaValueException, JsonSchemaValuesException


NoneType = type(None)

def validate_https___traceinsight_dev_schemas_timings_schema_json(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'$schema': 'https://json-schema.org/draft/2020-12/schema', '$id': 'https://traceinsight.dev/schemas/timings.schema.json', 'title': 'traceinsight <mode>/timings.json (per-step seconds of one mode)', 'description': 'What load reads from timings.json. Times are seconds: finite, not negative, and at most a day per step; a damaged file makes its mode fail in one line naming the field, the other modes still open.', 'type': 'object', 'properties': {'steps_s': {'type': ['array', 'null'], 'items': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds'}, 'maxItems': 10000000}, 'first_step_s': {'oneOf': [{'type': 'null'}, {'type': 'number', 'minimum': 0, 'maximum': 86400}]}, 'step_nums': {'type': ['array', 'null'], 'items': {'type': 'integer'}, 'maxItems': 10000000}, 'traced': {'type': ['object', 'null'], 'properties': {'host': {'type': ['object', 'null'], 'properties': {'steps_s': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds_list'}, 'problem': {'type': ['string', 'null']}, 'first_step_note': {'type': ['string', 'null']}, 'load': {'description': "the machine's load while the pass's traced steps ran", '$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/phase_load'}, 'profile_options': {'type': ['object', 'null'], 'properties': {'requested': {'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}, 'recorded': {'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}}}}}, 'python': {'type': ['object', 'null'], 'properties': {'steps_s': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds_list'}, 'problem': {'type': ['string', 'null']}, 'first_step_note': {'type': ['string', 'null']}, 'load': {'description': "the machine's load while the pass's traced steps ran", '$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/phase_load'}, 'profile_options': {'type': ['object', 'null'], 'properties': {'requested': {'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}, 'recorded': {'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}}}}}}}, 'rounds': {'description': 'the untraced timing rounds whose steps steps_s holds', 'type': ['array', 'null'], 'maxItems': 100000, 'items': {'type': 'object', 'properties': {'round': {'type': 'integer', 'minimum': 0}, 'steps_s': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds_list'}, 'step_nums': {'type': ['array', 'null'], 'items': {'type': 'integer'}, 'maxItems': 10000000}, 't_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'loadavg_end': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'other_cpu_busy': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'steal': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}}, 'rounds_set_aside': {'description': 'disturbed attempts whose steps are not used: timed again at once (re-run), or set aside', 'type': ['array', 'null'], 'maxItems': 100000, 'items': {'allOf': [{'type': 'object', 'properties': {'round': {'type': 'integer', 'minimum': 0}, 'steps_s': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds_list'}, 'step_nums': {'type': ['array', 'null'], 'items': {'type': 'integer'}, 'maxItems': 10000000}, 't_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'loadavg_end': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'other_cpu_busy': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'steal': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}], 'required': ['round', 'action'], 'properties': {'action': {'enum': ['re-run', 'set aside']}}}}, 'disturbed_other_cpu': {'type': ['number', 'null'], 'minimum': 0, 'maximum': 1}, 'load': {'type': ['object', 'null'], 'properties': {'cpu_count': {'type': ['integer', 'null'], 'minimum': 0}, 'cpu_usable': {'type': ['integer', 'null'], 'minimum': 0}, 'loadavg_start': {'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, 'loadavg_end': {'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, 'timing_phase': {'type': ['object', 'null'], 'properties': {'t_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'loadavg_end': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'other_cpu_busy': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'steal': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}}}, 'memory': {'type': ['object', 'null'], 'properties': {'peak_rss_bytes': {'type': ['integer', 'null'], 'minimum': 0}, 'basis': {'enum': ['phase', 'process', None]}, 'rss_start_bytes': {'type': ['integer', 'null'], 'minimum': 0}, 'rss_end_bytes': {'type': ['integer', 'null'], 'minimum': 0}}}, 'step_span': {'description': "a script's mode (run, profile(), the Keras callback): what one step spans: a loop's iteration from one step call's start to the next's, a fit batch, a hand-marked step, or a mix of these", 'enum': ['iteration', 'batch', 'marked', 'mixed', None]}, 'step_calls': {'description': "the functions (tf.function, Keras method, --step-function) whose calls began a loop's iterations", 'type': ['array', 'null'], 'maxItems': 10000, 'items': {'type': 'string', 'maxLength': 1000}}, 'calibration': {'type': ['object', 'null'], 'description': "the profiler's cost measured in the workload process: blocks of `calls` calls of one small eager op, timed untraced and inside the host pass", 'required': ['calls'], 'properties': {'calls': {'type': 'integer', 'minimum': 1}, 'untraced_s': {'type': ['array', 'null'], 'items': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds'}, 'maxItems': 10000000}, 'traced_s': {'type': ['array', 'null'], 'items': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds'}, 'maxItems': 10000000}}}, 'python_files': {'type': ['object', 'null'], 'additionalProperties': {'type': 'string'}}, 'layer_calls': {'type': ['object', 'null'], 'description': "each layer class's call frame as the python tracer names it (file base name:first line) -> the function's qualified name and the model's layers whose call it is", 'additionalProperties': {'type': 'object', 'properties': {'function': {'type': 'string'}, 'layers': {'type': 'array', 'items': {'type': 'string'}}}}}, 'input_signatures': {'type': ['object', 'null'], 'properties': {'steps': {'type': ['integer', 'null']}, 'truncated': {'type': ['boolean', 'null']}, 'distinct': {'type': ['array', 'null'], 'maxItems': 100000, 'items': {'type': 'object', 'properties': {'args': {'type': ['array', 'null'], 'items': {'type': 'string'}}, 'kinds': {'type': ['array', 'null'], 'maxItems': 10000, 'items': {'type': 'object', 'required': ['kind'], 'properties': {'kind': {'enum': ['python', 'array', 'other']}, 'type': {'type': ['string', 'null'], 'maxLength': 1000}, 'container': {'enum': ['ndarray', 'tensor', None]}, 'dtype': {'type': ['string', 'null'], 'maxLength': 100}, 'shape': {'type': ['array', 'null'], 'maxItems': 64, 'items': {'type': ['integer', 'null']}}}}}}}}}}}, '$defs': {'round': {'type': 'object', 'properties': {'round': {'type': 'integer', 'minimum': 0}, 'steps_s': {'type': ['array', 'null'], 'items': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds'}, 'maxItems': 10000000}, 'step_nums': {'type': ['array', 'null'], 'items': {'type': 'integer'}, 'maxItems': 10000000}, 't_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, 'loadavg_end': {'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, 'other_cpu_busy': {'type': ['number', 'null'], 'minimum': 0, 'maximum': 1}, 'steal': {'type': ['number', 'null'], 'minimum': 0, 'maximum': 1}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}, 'phase_load': {'type': ['object', 'null'], 'properties': {'t_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, 'loadavg_end': {'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, 'other_cpu_busy': {'type': ['number', 'null'], 'minimum': 0, 'maximum': 1}, 'steal': {'type': ['number', 'null'], 'minimum': 0, 'maximum': 1}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}, 'seconds': {'type': 'number', 'minimum': 0, 'maximum': 86400}, 'share': {'type': ['number', 'null'], 'minimum': 0, 'maximum': 1}, 'loadavg': {'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, 'seconds_list': {'type': ['array', 'null'], 'items': {'type': 'number', 'minimum': 0, 'maximum': 86400}, 'maxItems': 10000000}, 'pass': {'type': ['object', 'null'], 'properties': {'steps_s': {'type': ['array', 'null'], 'items': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds'}, 'maxItems': 10000000}, 'problem': {'type': ['string', 'null']}, 'first_step_note': {'type': ['string', 'null']}, 'load': {'type': ['object', 'null'], 'properties': {'t_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'loadavg_end': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'other_cpu_busy': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'steal': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}, 'profile_options': {'type': ['object', 'null'], 'properties': {'requested': {'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}, 'recorded': {'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}}}}}}}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data_keys = set(data.keys())
        if "steps_s" in data_keys:
            data_keys.remove("steps_s")
            data__stepss = data["steps_s"]
            validate_https___traceinsight_dev_schemas_timings_schema_json___defs_seconds_list(data__stepss, custom_formats, (name_prefix or "data") + ".steps_s")
        if "first_step_s" in data_keys:
            data_keys.remove("first_step_s")
            data__firststeps = data["first_step_s"]
            data__firststeps_one_of_count1 = 0
            if data__firststeps_one_of_count1 < 2:
                try:
                    if not isinstance(data__firststeps, (NoneType)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".first_step_s must be null", value=data__firststeps, name="" + (name_prefix or "data") + ".first_step_s", definition={'type': 'null'}, rule='type')
                    data__firststeps_one_of_count1 += 1
                except (JsonSchemaValueException, JsonSchemaValuesException): pass
            if data__firststeps_one_of_count1 < 2:
                try:
                    validate_https___traceinsight_dev_schemas_timings_schema_json___defs_seconds(data__firststeps, custom_formats, (name_prefix or "data") + ".first_step_s")
                    data__firststeps_one_of_count1 += 1
                except (JsonSchemaValueException, JsonSchemaValuesException): pass
            if data__firststeps_one_of_count1 != 1:
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".first_step_s must be valid exactly by one definition" + (" (" + str(data__firststeps_one_of_count1) + " matches found)"), value=data__firststeps, name="" + (name_prefix or "data") + ".first_step_s", definition={'oneOf': [{'type': 'null'}, {'type': 'number', 'minimum': 0, 'maximum': 86400}]}, rule='oneOf')
        if "step_nums" in data_keys:
            data_keys.remove("step_nums")
            data__stepnums = data["step_nums"]
            if not isinstance(data__stepnums, (list, tuple, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".step_nums must be array or null", value=data__stepnums, name="" + (name_prefix or "data") + ".step_nums", definition={'type': ['array', 'null'], 'items': {'type': 'integer'}, 'maxItems': 10000000}, rule='type')
            data__stepnums_is_list = isinstance(data__stepnums, (list, tuple))
            if data__stepnums_is_list:
                data__stepnums_len = len(data__stepnums)
                if data__stepnums_len > 10000000:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".step_nums must contain less than or equal to 10000000 items", value=data__stepnums, name="" + (name_prefix or "data") + ".step_nums", definition={'type': ['array', 'null'], 'items': {'type': 'integer'}, 'maxItems': 10000000}, rule='maxItems')
                for data__stepnums_x, data__stepnums_item in enumerate(data__stepnums):
                    if not isinstance(data__stepnums_item, (int)) and not (isinstance(data__stepnums_item, float) and data__stepnums_item.is_integer()) or isinstance(data__stepnums_item, bool):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".step_nums[{data__stepnums_x}]".format(**locals()) + " must be integer", value=data__stepnums_item, name="" + (name_prefix or "data") + ".step_nums[{data__stepnums_x}]".format(**locals()) + "", definition={'type': 'integer'}, rule='type')
        if "traced" in data_keys:
            data_keys.remove("traced")
            data__traced = data["traced"]
            if not isinstance(data__traced, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".traced must be object or null", value=data__traced, name="" + (name_prefix or "data") + ".traced", definition={'type': ['object', 'null'], 'properties': {'host': {'type': ['object', 'null'], 'properties': {'steps_s': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds_list'}, 'problem': {'type': ['string', 'null']}, 'first_step_note': {'type': ['string', 'null']}, 'load': {'description': "the machine's load while the pass's traced steps ran", '$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/phase_load'}, 'profile_options': {'type': ['object', 'null'], 'properties': {'requested': {'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}, 'recorded': {'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}}}}}, 'python': {'type': ['object', 'null'], 'properties': {'steps_s': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds_list'}, 'problem': {'type': ['string', 'null']}, 'first_step_note': {'type': ['string', 'null']}, 'load': {'description': "the machine's load while the pass's traced steps ran", '$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/phase_load'}, 'profile_options': {'type': ['object', 'null'], 'properties': {'requested': {'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}, 'recorded': {'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}}}}}}}, rule='type')
            data__traced_is_dict = isinstance(data__traced, dict)
            if data__traced_is_dict:
                data__traced_keys = set(data__traced.keys())
                if "host" in data__traced_keys:
                    data__traced_keys.remove("host")
                    data__traced__host = data__traced["host"]
                    validate_https___traceinsight_dev_schemas_timings_schema_json___defs_pass(data__traced__host, custom_formats, (name_prefix or "data") + ".traced.host")
                if "python" in data__traced_keys:
                    data__traced_keys.remove("python")
                    data__traced__python = data__traced["python"]
                    validate_https___traceinsight_dev_schemas_timings_schema_json___defs_pass(data__traced__python, custom_formats, (name_prefix or "data") + ".traced.python")
        if "rounds" in data_keys:
            data_keys.remove("rounds")
            data__rounds = data["rounds"]
            if not isinstance(data__rounds, (list, tuple, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".rounds must be array or null", value=data__rounds, name="" + (name_prefix or "data") + ".rounds", definition={'description': 'the untraced timing rounds whose steps steps_s holds', 'type': ['array', 'null'], 'maxItems': 100000, 'items': {'type': 'object', 'properties': {'round': {'type': 'integer', 'minimum': 0}, 'steps_s': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds_list'}, 'step_nums': {'type': ['array', 'null'], 'items': {'type': 'integer'}, 'maxItems': 10000000}, 't_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'loadavg_end': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'other_cpu_busy': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'steal': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}}, rule='type')
            data__rounds_is_list = isinstance(data__rounds, (list, tuple))
            if data__rounds_is_list:
                data__rounds_len = len(data__rounds)
                if data__rounds_len > 100000:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".rounds must contain less than or equal to 100000 items", value=data__rounds, name="" + (name_prefix or "data") + ".rounds", definition={'description': 'the untraced timing rounds whose steps steps_s holds', 'type': ['array', 'null'], 'maxItems': 100000, 'items': {'type': 'object', 'properties': {'round': {'type': 'integer', 'minimum': 0}, 'steps_s': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds_list'}, 'step_nums': {'type': ['array', 'null'], 'items': {'type': 'integer'}, 'maxItems': 10000000}, 't_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'loadavg_end': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'other_cpu_busy': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'steal': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}}, rule='maxItems')
                for data__rounds_x, data__rounds_item in enumerate(data__rounds):
                    validate_https___traceinsight_dev_schemas_timings_schema_json___defs_round(data__rounds_item, custom_formats, (name_prefix or "data") + ".rounds[{data__rounds_x}]".format(**locals()))
        if "rounds_set_aside" in data_keys:
            data_keys.remove("rounds_set_aside")
            data__roundssetaside = data["rounds_set_aside"]
            if not isinstance(data__roundssetaside, (list, tuple, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".rounds_set_aside must be array or null", value=data__roundssetaside, name="" + (name_prefix or "data") + ".rounds_set_aside", definition={'description': 'disturbed attempts whose steps are not used: timed again at once (re-run), or set aside', 'type': ['array', 'null'], 'maxItems': 100000, 'items': {'allOf': [{'type': 'object', 'properties': {'round': {'type': 'integer', 'minimum': 0}, 'steps_s': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds_list'}, 'step_nums': {'type': ['array', 'null'], 'items': {'type': 'integer'}, 'maxItems': 10000000}, 't_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'loadavg_end': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'other_cpu_busy': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'steal': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}], 'required': ['round', 'action'], 'properties': {'action': {'enum': ['re-run', 'set aside']}}}}, rule='type')
            data__roundssetaside_is_list = isinstance(data__roundssetaside, (list, tuple))
            if data__roundssetaside_is_list:
                data__roundssetaside_len = len(data__roundssetaside)
                if data__roundssetaside_len > 100000:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".rounds_set_aside must contain less than or equal to 100000 items", value=data__roundssetaside, name="" + (name_prefix or "data") + ".rounds_set_aside", definition={'description': 'disturbed attempts whose steps are not used: timed again at once (re-run), or set aside', 'type': ['array', 'null'], 'maxItems': 100000, 'items': {'allOf': [{'type': 'object', 'properties': {'round': {'type': 'integer', 'minimum': 0}, 'steps_s': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds_list'}, 'step_nums': {'type': ['array', 'null'], 'items': {'type': 'integer'}, 'maxItems': 10000000}, 't_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'loadavg_end': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'other_cpu_busy': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'steal': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}], 'required': ['round', 'action'], 'properties': {'action': {'enum': ['re-run', 'set aside']}}}}, rule='maxItems')
                for data__roundssetaside_x, data__roundssetaside_item in enumerate(data__roundssetaside):
                    validate_https___traceinsight_dev_schemas_timings_schema_json___defs_round(data__roundssetaside_item, custom_formats, (name_prefix or "data") + ".rounds_set_aside[{data__roundssetaside_x}]".format(**locals()))
                    data__roundssetaside_item_is_dict = isinstance(data__roundssetaside_item, dict)
                    if data__roundssetaside_item_is_dict:
                        data__roundssetaside_item__missing_keys = set(['round', 'action']) - data__roundssetaside_item.keys()
                        if data__roundssetaside_item__missing_keys:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".rounds_set_aside[{data__roundssetaside_x}]".format(**locals()) + " must contain " + (str(sorted(data__roundssetaside_item__missing_keys)) + " properties"), value=data__roundssetaside_item, name="" + (name_prefix or "data") + ".rounds_set_aside[{data__roundssetaside_x}]".format(**locals()) + "", definition={'allOf': [{'type': 'object', 'properties': {'round': {'type': 'integer', 'minimum': 0}, 'steps_s': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds_list'}, 'step_nums': {'type': ['array', 'null'], 'items': {'type': 'integer'}, 'maxItems': 10000000}, 't_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'loadavg_end': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'other_cpu_busy': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'steal': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}], 'required': ['round', 'action'], 'properties': {'action': {'enum': ['re-run', 'set aside']}}}, rule='required')
                        data__roundssetaside_item_keys = set(data__roundssetaside_item.keys())
                        if "action" in data__roundssetaside_item_keys:
                            data__roundssetaside_item_keys.remove("action")
                            data__roundssetaside_item__action = data__roundssetaside_item["action"]
                            if not (isinstance(data__roundssetaside_item__action, str) and data__roundssetaside_item__action == 're-run' or isinstance(data__roundssetaside_item__action, str) and data__roundssetaside_item__action == 'set aside'):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".rounds_set_aside[{data__roundssetaside_x}].action".format(**locals()) + " must be one of ['re-run', 'set aside']", value=data__roundssetaside_item__action, name="" + (name_prefix or "data") + ".rounds_set_aside[{data__roundssetaside_x}].action".format(**locals()) + "", definition={'enum': ['re-run', 'set aside']}, rule='enum')
        if "disturbed_other_cpu" in data_keys:
            data_keys.remove("disturbed_other_cpu")
            data__disturbedothercpu = data["disturbed_other_cpu"]
            validate_https___traceinsight_dev_schemas_timings_schema_json___defs_share(data__disturbedothercpu, custom_formats, (name_prefix or "data") + ".disturbed_other_cpu")
        if "load" in data_keys:
            data_keys.remove("load")
            data__load = data["load"]
            if not isinstance(data__load, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".load must be object or null", value=data__load, name="" + (name_prefix or "data") + ".load", definition={'type': ['object', 'null'], 'properties': {'cpu_count': {'type': ['integer', 'null'], 'minimum': 0}, 'cpu_usable': {'type': ['integer', 'null'], 'minimum': 0}, 'loadavg_start': {'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, 'loadavg_end': {'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, 'timing_phase': {'type': ['object', 'null'], 'properties': {'t_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'loadavg_end': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'other_cpu_busy': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'steal': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}}}, rule='type')
            data__load_is_dict = isinstance(data__load, dict)
            if data__load_is_dict:
                data__load_keys = set(data__load.keys())
                if "cpu_count" in data__load_keys:
                    data__load_keys.remove("cpu_count")
                    data__load__cpucount = data__load["cpu_count"]
                    if not isinstance(data__load__cpucount, (int, NoneType)) and not (isinstance(data__load__cpucount, float) and data__load__cpucount.is_integer()) or isinstance(data__load__cpucount, bool):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".load.cpu_count must be integer or null", value=data__load__cpucount, name="" + (name_prefix or "data") + ".load.cpu_count", definition={'type': ['integer', 'null'], 'minimum': 0}, rule='type')
                    if isinstance(data__load__cpucount, (int, float, Decimal)) and not isinstance(data__load__cpucount, bool):
                        if data__load__cpucount < 0:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".load.cpu_count must be bigger than or equal to 0", value=data__load__cpucount, name="" + (name_prefix or "data") + ".load.cpu_count", definition={'type': ['integer', 'null'], 'minimum': 0}, rule='minimum')
                if "cpu_usable" in data__load_keys:
                    data__load_keys.remove("cpu_usable")
                    data__load__cpuusable = data__load["cpu_usable"]
                    if not isinstance(data__load__cpuusable, (int, NoneType)) and not (isinstance(data__load__cpuusable, float) and data__load__cpuusable.is_integer()) or isinstance(data__load__cpuusable, bool):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".load.cpu_usable must be integer or null", value=data__load__cpuusable, name="" + (name_prefix or "data") + ".load.cpu_usable", definition={'type': ['integer', 'null'], 'minimum': 0}, rule='type')
                    if isinstance(data__load__cpuusable, (int, float, Decimal)) and not isinstance(data__load__cpuusable, bool):
                        if data__load__cpuusable < 0:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".load.cpu_usable must be bigger than or equal to 0", value=data__load__cpuusable, name="" + (name_prefix or "data") + ".load.cpu_usable", definition={'type': ['integer', 'null'], 'minimum': 0}, rule='minimum')
                if "loadavg_start" in data__load_keys:
                    data__load_keys.remove("loadavg_start")
                    data__load__loadavgstart = data__load["loadavg_start"]
                    validate_https___traceinsight_dev_schemas_timings_schema_json___defs_loadavg(data__load__loadavgstart, custom_formats, (name_prefix or "data") + ".load.loadavg_start")
                if "loadavg_end" in data__load_keys:
                    data__load_keys.remove("loadavg_end")
                    data__load__loadavgend = data__load["loadavg_end"]
                    validate_https___traceinsight_dev_schemas_timings_schema_json___defs_loadavg(data__load__loadavgend, custom_formats, (name_prefix or "data") + ".load.loadavg_end")
                if "timing_phase" in data__load_keys:
                    data__load_keys.remove("timing_phase")
                    data__load__timingphase = data__load["timing_phase"]
                    validate_https___traceinsight_dev_schemas_timings_schema_json___defs_phase_load(data__load__timingphase, custom_formats, (name_prefix or "data") + ".load.timing_phase")
        if "memory" in data_keys:
            data_keys.remove("memory")
            data__memory = data["memory"]
            if not isinstance(data__memory, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory must be object or null", value=data__memory, name="" + (name_prefix or "data") + ".memory", definition={'type': ['object', 'null'], 'properties': {'peak_rss_bytes': {'type': ['integer', 'null'], 'minimum': 0}, 'basis': {'enum': ['phase', 'process', None]}, 'rss_start_bytes': {'type': ['integer', 'null'], 'minimum': 0}, 'rss_end_bytes': {'type': ['integer', 'null'], 'minimum': 0}}}, rule='type')
            data__memory_is_dict = isinstance(data__memory, dict)
            if data__memory_is_dict:
                data__memory_keys = set(data__memory.keys())
                if "peak_rss_bytes" in data__memory_keys:
                    data__memory_keys.remove("peak_rss_bytes")
                    data__memory__peakrssbytes = data__memory["peak_rss_bytes"]
                    if not isinstance(data__memory__peakrssbytes, (int, NoneType)) and not (isinstance(data__memory__peakrssbytes, float) and data__memory__peakrssbytes.is_integer()) or isinstance(data__memory__peakrssbytes, bool):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory.peak_rss_bytes must be integer or null", value=data__memory__peakrssbytes, name="" + (name_prefix or "data") + ".memory.peak_rss_bytes", definition={'type': ['integer', 'null'], 'minimum': 0}, rule='type')
                    if isinstance(data__memory__peakrssbytes, (int, float, Decimal)) and not isinstance(data__memory__peakrssbytes, bool):
                        if data__memory__peakrssbytes < 0:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory.peak_rss_bytes must be bigger than or equal to 0", value=data__memory__peakrssbytes, name="" + (name_prefix or "data") + ".memory.peak_rss_bytes", definition={'type': ['integer', 'null'], 'minimum': 0}, rule='minimum')
                if "basis" in data__memory_keys:
                    data__memory_keys.remove("basis")
                    data__memory__basis = data__memory["basis"]
                    if not (isinstance(data__memory__basis, str) and data__memory__basis == 'phase' or isinstance(data__memory__basis, str) and data__memory__basis == 'process' or data__memory__basis is None):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory.basis must be one of ['phase', 'process', None]", value=data__memory__basis, name="" + (name_prefix or "data") + ".memory.basis", definition={'enum': ['phase', 'process', None]}, rule='enum')
                if "rss_start_bytes" in data__memory_keys:
                    data__memory_keys.remove("rss_start_bytes")
                    data__memory__rssstartbytes = data__memory["rss_start_bytes"]
                    if not isinstance(data__memory__rssstartbytes, (int, NoneType)) and not (isinstance(data__memory__rssstartbytes, float) and data__memory__rssstartbytes.is_integer()) or isinstance(data__memory__rssstartbytes, bool):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory.rss_start_bytes must be integer or null", value=data__memory__rssstartbytes, name="" + (name_prefix or "data") + ".memory.rss_start_bytes", definition={'type': ['integer', 'null'], 'minimum': 0}, rule='type')
                    if isinstance(data__memory__rssstartbytes, (int, float, Decimal)) and not isinstance(data__memory__rssstartbytes, bool):
                        if data__memory__rssstartbytes < 0:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory.rss_start_bytes must be bigger than or equal to 0", value=data__memory__rssstartbytes, name="" + (name_prefix or "data") + ".memory.rss_start_bytes", definition={'type': ['integer', 'null'], 'minimum': 0}, rule='minimum')
                if "rss_end_bytes" in data__memory_keys:
                    data__memory_keys.remove("rss_end_bytes")
                    data__memory__rssendbytes = data__memory["rss_end_bytes"]
                    if not isinstance(data__memory__rssendbytes, (int, NoneType)) and not (isinstance(data__memory__rssendbytes, float) and data__memory__rssendbytes.is_integer()) or isinstance(data__memory__rssendbytes, bool):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory.rss_end_bytes must be integer or null", value=data__memory__rssendbytes, name="" + (name_prefix or "data") + ".memory.rss_end_bytes", definition={'type': ['integer', 'null'], 'minimum': 0}, rule='type')
                    if isinstance(data__memory__rssendbytes, (int, float, Decimal)) and not isinstance(data__memory__rssendbytes, bool):
                        if data__memory__rssendbytes < 0:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".memory.rss_end_bytes must be bigger than or equal to 0", value=data__memory__rssendbytes, name="" + (name_prefix or "data") + ".memory.rss_end_bytes", definition={'type': ['integer', 'null'], 'minimum': 0}, rule='minimum')
        if "step_span" in data_keys:
            data_keys.remove("step_span")
            data__stepspan = data["step_span"]
            if not (isinstance(data__stepspan, str) and data__stepspan == 'iteration' or isinstance(data__stepspan, str) and data__stepspan == 'batch' or isinstance(data__stepspan, str) and data__stepspan == 'marked' or isinstance(data__stepspan, str) and data__stepspan == 'mixed' or data__stepspan is None):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".step_span must be one of ['iteration', 'batch', 'marked', 'mixed', None]", value=data__stepspan, name="" + (name_prefix or "data") + ".step_span", definition={'description': "a script's mode (run, profile(), the Keras callback): what one step spans: a loop's iteration from one step call's start to the next's, a fit batch, a hand-marked step, or a mix of these", 'enum': ['iteration', 'batch', 'marked', 'mixed', None]}, rule='enum')
        if "step_calls" in data_keys:
            data_keys.remove("step_calls")
            data__stepcalls = data["step_calls"]
            if not isinstance(data__stepcalls, (list, tuple, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".step_calls must be array or null", value=data__stepcalls, name="" + (name_prefix or "data") + ".step_calls", definition={'description': "the functions (tf.function, Keras method, --step-function) whose calls began a loop's iterations", 'type': ['array', 'null'], 'maxItems': 10000, 'items': {'type': 'string', 'maxLength': 1000}}, rule='type')
            data__stepcalls_is_list = isinstance(data__stepcalls, (list, tuple))
            if data__stepcalls_is_list:
                data__stepcalls_len = len(data__stepcalls)
                if data__stepcalls_len > 10000:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".step_calls must contain less than or equal to 10000 items", value=data__stepcalls, name="" + (name_prefix or "data") + ".step_calls", definition={'description': "the functions (tf.function, Keras method, --step-function) whose calls began a loop's iterations", 'type': ['array', 'null'], 'maxItems': 10000, 'items': {'type': 'string', 'maxLength': 1000}}, rule='maxItems')
                for data__stepcalls_x, data__stepcalls_item in enumerate(data__stepcalls):
                    if not isinstance(data__stepcalls_item, (str)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".step_calls[{data__stepcalls_x}]".format(**locals()) + " must be string", value=data__stepcalls_item, name="" + (name_prefix or "data") + ".step_calls[{data__stepcalls_x}]".format(**locals()) + "", definition={'type': 'string', 'maxLength': 1000}, rule='type')
                    if isinstance(data__stepcalls_item, str):
                        data__stepcalls_item_len = len(data__stepcalls_item)
                        if data__stepcalls_item_len > 1000:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".step_calls[{data__stepcalls_x}]".format(**locals()) + " must be shorter than or equal to 1000 characters", value=data__stepcalls_item, name="" + (name_prefix or "data") + ".step_calls[{data__stepcalls_x}]".format(**locals()) + "", definition={'type': 'string', 'maxLength': 1000}, rule='maxLength')
        if "calibration" in data_keys:
            data_keys.remove("calibration")
            data__calibration = data["calibration"]
            if not isinstance(data__calibration, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".calibration must be object or null", value=data__calibration, name="" + (name_prefix or "data") + ".calibration", definition={'type': ['object', 'null'], 'description': "the profiler's cost measured in the workload process: blocks of `calls` calls of one small eager op, timed untraced and inside the host pass", 'required': ['calls'], 'properties': {'calls': {'type': 'integer', 'minimum': 1}, 'untraced_s': {'type': ['array', 'null'], 'items': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds'}, 'maxItems': 10000000}, 'traced_s': {'type': ['array', 'null'], 'items': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds'}, 'maxItems': 10000000}}}, rule='type')
            data__calibration_is_dict = isinstance(data__calibration, dict)
            if data__calibration_is_dict:
                data__calibration__missing_keys = set(['calls']) - data__calibration.keys()
                if data__calibration__missing_keys:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".calibration must contain " + (str(sorted(data__calibration__missing_keys)) + " properties"), value=data__calibration, name="" + (name_prefix or "data") + ".calibration", definition={'type': ['object', 'null'], 'description': "the profiler's cost measured in the workload process: blocks of `calls` calls of one small eager op, timed untraced and inside the host pass", 'required': ['calls'], 'properties': {'calls': {'type': 'integer', 'minimum': 1}, 'untraced_s': {'type': ['array', 'null'], 'items': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds'}, 'maxItems': 10000000}, 'traced_s': {'type': ['array', 'null'], 'items': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds'}, 'maxItems': 10000000}}}, rule='required')
                data__calibration_keys = set(data__calibration.keys())
                if "calls" in data__calibration_keys:
                    data__calibration_keys.remove("calls")
                    data__calibration__calls = data__calibration["calls"]
                    if not isinstance(data__calibration__calls, (int)) and not (isinstance(data__calibration__calls, float) and data__calibration__calls.is_integer()) or isinstance(data__calibration__calls, bool):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".calibration.calls must be integer", value=data__calibration__calls, name="" + (name_prefix or "data") + ".calibration.calls", definition={'type': 'integer', 'minimum': 1}, rule='type')
                    if isinstance(data__calibration__calls, (int, float, Decimal)) and not isinstance(data__calibration__calls, bool):
                        if data__calibration__calls < 1:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".calibration.calls must be bigger than or equal to 1", value=data__calibration__calls, name="" + (name_prefix or "data") + ".calibration.calls", definition={'type': 'integer', 'minimum': 1}, rule='minimum')
                if "untraced_s" in data__calibration_keys:
                    data__calibration_keys.remove("untraced_s")
                    data__calibration__untraceds = data__calibration["untraced_s"]
                    validate_https___traceinsight_dev_schemas_timings_schema_json___defs_seconds_list(data__calibration__untraceds, custom_formats, (name_prefix or "data") + ".calibration.untraced_s")
                if "traced_s" in data__calibration_keys:
                    data__calibration_keys.remove("traced_s")
                    data__calibration__traceds = data__calibration["traced_s"]
                    validate_https___traceinsight_dev_schemas_timings_schema_json___defs_seconds_list(data__calibration__traceds, custom_formats, (name_prefix or "data") + ".calibration.traced_s")
        if "python_files" in data_keys:
            data_keys.remove("python_files")
            data__pythonfiles = data["python_files"]
            if not isinstance(data__pythonfiles, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".python_files must be object or null", value=data__pythonfiles, name="" + (name_prefix or "data") + ".python_files", definition={'type': ['object', 'null'], 'additionalProperties': {'type': 'string'}}, rule='type')
            data__pythonfiles_is_dict = isinstance(data__pythonfiles, dict)
            if data__pythonfiles_is_dict:
                data__pythonfiles_keys = set(data__pythonfiles.keys())
                for data__pythonfiles_key in data__pythonfiles_keys:
                    if data__pythonfiles_key not in []:
                        data__pythonfiles_value = data__pythonfiles.get(data__pythonfiles_key)
                        if not isinstance(data__pythonfiles_value, (str)):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".python_files.{data__pythonfiles_key}".format(**locals()) + " must be string", value=data__pythonfiles_value, name="" + (name_prefix or "data") + ".python_files.{data__pythonfiles_key}".format(**locals()) + "", definition={'type': 'string'}, rule='type')
        if "layer_calls" in data_keys:
            data_keys.remove("layer_calls")
            data__layercalls = data["layer_calls"]
            if not isinstance(data__layercalls, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".layer_calls must be object or null", value=data__layercalls, name="" + (name_prefix or "data") + ".layer_calls", definition={'type': ['object', 'null'], 'description': "each layer class's call frame as the python tracer names it (file base name:first line) -> the function's qualified name and the model's layers whose call it is", 'additionalProperties': {'type': 'object', 'properties': {'function': {'type': 'string'}, 'layers': {'type': 'array', 'items': {'type': 'string'}}}}}, rule='type')
            data__layercalls_is_dict = isinstance(data__layercalls, dict)
            if data__layercalls_is_dict:
                data__layercalls_keys = set(data__layercalls.keys())
                for data__layercalls_key in data__layercalls_keys:
                    if data__layercalls_key not in []:
                        data__layercalls_value = data__layercalls.get(data__layercalls_key)
                        if not isinstance(data__layercalls_value, (dict)):
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".layer_calls.{data__layercalls_key}".format(**locals()) + " must be object", value=data__layercalls_value, name="" + (name_prefix or "data") + ".layer_calls.{data__layercalls_key}".format(**locals()) + "", definition={'type': 'object', 'properties': {'function': {'type': 'string'}, 'layers': {'type': 'array', 'items': {'type': 'string'}}}}, rule='type')
                        data__layercalls_value_is_dict = isinstance(data__layercalls_value, dict)
                        if data__layercalls_value_is_dict:
                            data__layercalls_value_keys = set(data__layercalls_value.keys())
                            if "function" in data__layercalls_value_keys:
                                data__layercalls_value_keys.remove("function")
                                data__layercalls_value__function = data__layercalls_value["function"]
                                if not isinstance(data__layercalls_value__function, (str)):
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".layer_calls.{data__layercalls_key}.function".format(**locals()) + " must be string", value=data__layercalls_value__function, name="" + (name_prefix or "data") + ".layer_calls.{data__layercalls_key}.function".format(**locals()) + "", definition={'type': 'string'}, rule='type')
                            if "layers" in data__layercalls_value_keys:
                                data__layercalls_value_keys.remove("layers")
                                data__layercalls_value__layers = data__layercalls_value["layers"]
                                if not isinstance(data__layercalls_value__layers, (list, tuple)):
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".layer_calls.{data__layercalls_key}.layers".format(**locals()) + " must be array", value=data__layercalls_value__layers, name="" + (name_prefix or "data") + ".layer_calls.{data__layercalls_key}.layers".format(**locals()) + "", definition={'type': 'array', 'items': {'type': 'string'}}, rule='type')
                                data__layercalls_value__layers_is_list = isinstance(data__layercalls_value__layers, (list, tuple))
                                if data__layercalls_value__layers_is_list:
                                    data__layercalls_value__layers_len = len(data__layercalls_value__layers)
                                    for data__layercalls_value__layers_x, data__layercalls_value__layers_item in enumerate(data__layercalls_value__layers):
                                        if not isinstance(data__layercalls_value__layers_item, (str)):
                                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".layer_calls.{data__layercalls_key}.layers[{data__layercalls_value__layers_x}]".format(**locals()) + " must be string", value=data__layercalls_value__layers_item, name="" + (name_prefix or "data") + ".layer_calls.{data__layercalls_key}.layers[{data__layercalls_value__layers_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
        if "input_signatures" in data_keys:
            data_keys.remove("input_signatures")
            data__inputsignatures = data["input_signatures"]
            if not isinstance(data__inputsignatures, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures must be object or null", value=data__inputsignatures, name="" + (name_prefix or "data") + ".input_signatures", definition={'type': ['object', 'null'], 'properties': {'steps': {'type': ['integer', 'null']}, 'truncated': {'type': ['boolean', 'null']}, 'distinct': {'type': ['array', 'null'], 'maxItems': 100000, 'items': {'type': 'object', 'properties': {'args': {'type': ['array', 'null'], 'items': {'type': 'string'}}, 'kinds': {'type': ['array', 'null'], 'maxItems': 10000, 'items': {'type': 'object', 'required': ['kind'], 'properties': {'kind': {'enum': ['python', 'array', 'other']}, 'type': {'type': ['string', 'null'], 'maxLength': 1000}, 'container': {'enum': ['ndarray', 'tensor', None]}, 'dtype': {'type': ['string', 'null'], 'maxLength': 100}, 'shape': {'type': ['array', 'null'], 'maxItems': 64, 'items': {'type': ['integer', 'null']}}}}}}}}}}, rule='type')
            data__inputsignatures_is_dict = isinstance(data__inputsignatures, dict)
            if data__inputsignatures_is_dict:
                data__inputsignatures_keys = set(data__inputsignatures.keys())
                if "steps" in data__inputsignatures_keys:
                    data__inputsignatures_keys.remove("steps")
                    data__inputsignatures__steps = data__inputsignatures["steps"]
                    if not isinstance(data__inputsignatures__steps, (int, NoneType)) and not (isinstance(data__inputsignatures__steps, float) and data__inputsignatures__steps.is_integer()) or isinstance(data__inputsignatures__steps, bool):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.steps must be integer or null", value=data__inputsignatures__steps, name="" + (name_prefix or "data") + ".input_signatures.steps", definition={'type': ['integer', 'null']}, rule='type')
                if "truncated" in data__inputsignatures_keys:
                    data__inputsignatures_keys.remove("truncated")
                    data__inputsignatures__truncated = data__inputsignatures["truncated"]
                    if not isinstance(data__inputsignatures__truncated, (bool, NoneType)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.truncated must be boolean or null", value=data__inputsignatures__truncated, name="" + (name_prefix or "data") + ".input_signatures.truncated", definition={'type': ['boolean', 'null']}, rule='type')
                if "distinct" in data__inputsignatures_keys:
                    data__inputsignatures_keys.remove("distinct")
                    data__inputsignatures__distinct = data__inputsignatures["distinct"]
                    if not isinstance(data__inputsignatures__distinct, (list, tuple, NoneType)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct must be array or null", value=data__inputsignatures__distinct, name="" + (name_prefix or "data") + ".input_signatures.distinct", definition={'type': ['array', 'null'], 'maxItems': 100000, 'items': {'type': 'object', 'properties': {'args': {'type': ['array', 'null'], 'items': {'type': 'string'}}, 'kinds': {'type': ['array', 'null'], 'maxItems': 10000, 'items': {'type': 'object', 'required': ['kind'], 'properties': {'kind': {'enum': ['python', 'array', 'other']}, 'type': {'type': ['string', 'null'], 'maxLength': 1000}, 'container': {'enum': ['ndarray', 'tensor', None]}, 'dtype': {'type': ['string', 'null'], 'maxLength': 100}, 'shape': {'type': ['array', 'null'], 'maxItems': 64, 'items': {'type': ['integer', 'null']}}}}}}}}, rule='type')
                    data__inputsignatures__distinct_is_list = isinstance(data__inputsignatures__distinct, (list, tuple))
                    if data__inputsignatures__distinct_is_list:
                        data__inputsignatures__distinct_len = len(data__inputsignatures__distinct)
                        if data__inputsignatures__distinct_len > 100000:
                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct must contain less than or equal to 100000 items", value=data__inputsignatures__distinct, name="" + (name_prefix or "data") + ".input_signatures.distinct", definition={'type': ['array', 'null'], 'maxItems': 100000, 'items': {'type': 'object', 'properties': {'args': {'type': ['array', 'null'], 'items': {'type': 'string'}}, 'kinds': {'type': ['array', 'null'], 'maxItems': 10000, 'items': {'type': 'object', 'required': ['kind'], 'properties': {'kind': {'enum': ['python', 'array', 'other']}, 'type': {'type': ['string', 'null'], 'maxLength': 1000}, 'container': {'enum': ['ndarray', 'tensor', None]}, 'dtype': {'type': ['string', 'null'], 'maxLength': 100}, 'shape': {'type': ['array', 'null'], 'maxItems': 64, 'items': {'type': ['integer', 'null']}}}}}}}}, rule='maxItems')
                        for data__inputsignatures__distinct_x, data__inputsignatures__distinct_item in enumerate(data__inputsignatures__distinct):
                            if not isinstance(data__inputsignatures__distinct_item, (dict)):
                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}]".format(**locals()) + " must be object", value=data__inputsignatures__distinct_item, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}]".format(**locals()) + "", definition={'type': 'object', 'properties': {'args': {'type': ['array', 'null'], 'items': {'type': 'string'}}, 'kinds': {'type': ['array', 'null'], 'maxItems': 10000, 'items': {'type': 'object', 'required': ['kind'], 'properties': {'kind': {'enum': ['python', 'array', 'other']}, 'type': {'type': ['string', 'null'], 'maxLength': 1000}, 'container': {'enum': ['ndarray', 'tensor', None]}, 'dtype': {'type': ['string', 'null'], 'maxLength': 100}, 'shape': {'type': ['array', 'null'], 'maxItems': 64, 'items': {'type': ['integer', 'null']}}}}}}}, rule='type')
                            data__inputsignatures__distinct_item_is_dict = isinstance(data__inputsignatures__distinct_item, dict)
                            if data__inputsignatures__distinct_item_is_dict:
                                data__inputsignatures__distinct_item_keys = set(data__inputsignatures__distinct_item.keys())
                                if "args" in data__inputsignatures__distinct_item_keys:
                                    data__inputsignatures__distinct_item_keys.remove("args")
                                    data__inputsignatures__distinct_item__args = data__inputsignatures__distinct_item["args"]
                                    if not isinstance(data__inputsignatures__distinct_item__args, (list, tuple, NoneType)):
                                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].args".format(**locals()) + " must be array or null", value=data__inputsignatures__distinct_item__args, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].args".format(**locals()) + "", definition={'type': ['array', 'null'], 'items': {'type': 'string'}}, rule='type')
                                    data__inputsignatures__distinct_item__args_is_list = isinstance(data__inputsignatures__distinct_item__args, (list, tuple))
                                    if data__inputsignatures__distinct_item__args_is_list:
                                        data__inputsignatures__distinct_item__args_len = len(data__inputsignatures__distinct_item__args)
                                        for data__inputsignatures__distinct_item__args_x, data__inputsignatures__distinct_item__args_item in enumerate(data__inputsignatures__distinct_item__args):
                                            if not isinstance(data__inputsignatures__distinct_item__args_item, (str)):
                                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].args[{data__inputsignatures__distinct_item__args_x}]".format(**locals()) + " must be string", value=data__inputsignatures__distinct_item__args_item, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].args[{data__inputsignatures__distinct_item__args_x}]".format(**locals()) + "", definition={'type': 'string'}, rule='type')
                                if "kinds" in data__inputsignatures__distinct_item_keys:
                                    data__inputsignatures__distinct_item_keys.remove("kinds")
                                    data__inputsignatures__distinct_item__kinds = data__inputsignatures__distinct_item["kinds"]
                                    if not isinstance(data__inputsignatures__distinct_item__kinds, (list, tuple, NoneType)):
                                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds".format(**locals()) + " must be array or null", value=data__inputsignatures__distinct_item__kinds, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds".format(**locals()) + "", definition={'type': ['array', 'null'], 'maxItems': 10000, 'items': {'type': 'object', 'required': ['kind'], 'properties': {'kind': {'enum': ['python', 'array', 'other']}, 'type': {'type': ['string', 'null'], 'maxLength': 1000}, 'container': {'enum': ['ndarray', 'tensor', None]}, 'dtype': {'type': ['string', 'null'], 'maxLength': 100}, 'shape': {'type': ['array', 'null'], 'maxItems': 64, 'items': {'type': ['integer', 'null']}}}}}, rule='type')
                                    data__inputsignatures__distinct_item__kinds_is_list = isinstance(data__inputsignatures__distinct_item__kinds, (list, tuple))
                                    if data__inputsignatures__distinct_item__kinds_is_list:
                                        data__inputsignatures__distinct_item__kinds_len = len(data__inputsignatures__distinct_item__kinds)
                                        if data__inputsignatures__distinct_item__kinds_len > 10000:
                                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds".format(**locals()) + " must contain less than or equal to 10000 items", value=data__inputsignatures__distinct_item__kinds, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds".format(**locals()) + "", definition={'type': ['array', 'null'], 'maxItems': 10000, 'items': {'type': 'object', 'required': ['kind'], 'properties': {'kind': {'enum': ['python', 'array', 'other']}, 'type': {'type': ['string', 'null'], 'maxLength': 1000}, 'container': {'enum': ['ndarray', 'tensor', None]}, 'dtype': {'type': ['string', 'null'], 'maxLength': 100}, 'shape': {'type': ['array', 'null'], 'maxItems': 64, 'items': {'type': ['integer', 'null']}}}}}, rule='maxItems')
                                        for data__inputsignatures__distinct_item__kinds_x, data__inputsignatures__distinct_item__kinds_item in enumerate(data__inputsignatures__distinct_item__kinds):
                                            if not isinstance(data__inputsignatures__distinct_item__kinds_item, (dict)):
                                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}]".format(**locals()) + " must be object", value=data__inputsignatures__distinct_item__kinds_item, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}]".format(**locals()) + "", definition={'type': 'object', 'required': ['kind'], 'properties': {'kind': {'enum': ['python', 'array', 'other']}, 'type': {'type': ['string', 'null'], 'maxLength': 1000}, 'container': {'enum': ['ndarray', 'tensor', None]}, 'dtype': {'type': ['string', 'null'], 'maxLength': 100}, 'shape': {'type': ['array', 'null'], 'maxItems': 64, 'items': {'type': ['integer', 'null']}}}}, rule='type')
                                            data__inputsignatures__distinct_item__kinds_item_is_dict = isinstance(data__inputsignatures__distinct_item__kinds_item, dict)
                                            if data__inputsignatures__distinct_item__kinds_item_is_dict:
                                                data__inputsignatures__distinct_item__kinds_item__missing_keys = set(['kind']) - data__inputsignatures__distinct_item__kinds_item.keys()
                                                if data__inputsignatures__distinct_item__kinds_item__missing_keys:
                                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}]".format(**locals()) + " must contain " + (str(sorted(data__inputsignatures__distinct_item__kinds_item__missing_keys)) + " properties"), value=data__inputsignatures__distinct_item__kinds_item, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}]".format(**locals()) + "", definition={'type': 'object', 'required': ['kind'], 'properties': {'kind': {'enum': ['python', 'array', 'other']}, 'type': {'type': ['string', 'null'], 'maxLength': 1000}, 'container': {'enum': ['ndarray', 'tensor', None]}, 'dtype': {'type': ['string', 'null'], 'maxLength': 100}, 'shape': {'type': ['array', 'null'], 'maxItems': 64, 'items': {'type': ['integer', 'null']}}}}, rule='required')
                                                data__inputsignatures__distinct_item__kinds_item_keys = set(data__inputsignatures__distinct_item__kinds_item.keys())
                                                if "kind" in data__inputsignatures__distinct_item__kinds_item_keys:
                                                    data__inputsignatures__distinct_item__kinds_item_keys.remove("kind")
                                                    data__inputsignatures__distinct_item__kinds_item__kind = data__inputsignatures__distinct_item__kinds_item["kind"]
                                                    if not (isinstance(data__inputsignatures__distinct_item__kinds_item__kind, str) and data__inputsignatures__distinct_item__kinds_item__kind == 'python' or isinstance(data__inputsignatures__distinct_item__kinds_item__kind, str) and data__inputsignatures__distinct_item__kinds_item__kind == 'array' or isinstance(data__inputsignatures__distinct_item__kinds_item__kind, str) and data__inputsignatures__distinct_item__kinds_item__kind == 'other'):
                                                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].kind".format(**locals()) + " must be one of ['python', 'array', 'other']", value=data__inputsignatures__distinct_item__kinds_item__kind, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].kind".format(**locals()) + "", definition={'enum': ['python', 'array', 'other']}, rule='enum')
                                                if "type" in data__inputsignatures__distinct_item__kinds_item_keys:
                                                    data__inputsignatures__distinct_item__kinds_item_keys.remove("type")
                                                    data__inputsignatures__distinct_item__kinds_item__type = data__inputsignatures__distinct_item__kinds_item["type"]
                                                    if not isinstance(data__inputsignatures__distinct_item__kinds_item__type, (str, NoneType)):
                                                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].type".format(**locals()) + " must be string or null", value=data__inputsignatures__distinct_item__kinds_item__type, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].type".format(**locals()) + "", definition={'type': ['string', 'null'], 'maxLength': 1000}, rule='type')
                                                    if isinstance(data__inputsignatures__distinct_item__kinds_item__type, str):
                                                        data__inputsignatures__distinct_item__kinds_item__type_len = len(data__inputsignatures__distinct_item__kinds_item__type)
                                                        if data__inputsignatures__distinct_item__kinds_item__type_len > 1000:
                                                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].type".format(**locals()) + " must be shorter than or equal to 1000 characters", value=data__inputsignatures__distinct_item__kinds_item__type, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].type".format(**locals()) + "", definition={'type': ['string', 'null'], 'maxLength': 1000}, rule='maxLength')
                                                if "container" in data__inputsignatures__distinct_item__kinds_item_keys:
                                                    data__inputsignatures__distinct_item__kinds_item_keys.remove("container")
                                                    data__inputsignatures__distinct_item__kinds_item__container = data__inputsignatures__distinct_item__kinds_item["container"]
                                                    if not (isinstance(data__inputsignatures__distinct_item__kinds_item__container, str) and data__inputsignatures__distinct_item__kinds_item__container == 'ndarray' or isinstance(data__inputsignatures__distinct_item__kinds_item__container, str) and data__inputsignatures__distinct_item__kinds_item__container == 'tensor' or data__inputsignatures__distinct_item__kinds_item__container is None):
                                                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].container".format(**locals()) + " must be one of ['ndarray', 'tensor', None]", value=data__inputsignatures__distinct_item__kinds_item__container, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].container".format(**locals()) + "", definition={'enum': ['ndarray', 'tensor', None]}, rule='enum')
                                                if "dtype" in data__inputsignatures__distinct_item__kinds_item_keys:
                                                    data__inputsignatures__distinct_item__kinds_item_keys.remove("dtype")
                                                    data__inputsignatures__distinct_item__kinds_item__dtype = data__inputsignatures__distinct_item__kinds_item["dtype"]
                                                    if not isinstance(data__inputsignatures__distinct_item__kinds_item__dtype, (str, NoneType)):
                                                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].dtype".format(**locals()) + " must be string or null", value=data__inputsignatures__distinct_item__kinds_item__dtype, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].dtype".format(**locals()) + "", definition={'type': ['string', 'null'], 'maxLength': 100}, rule='type')
                                                    if isinstance(data__inputsignatures__distinct_item__kinds_item__dtype, str):
                                                        data__inputsignatures__distinct_item__kinds_item__dtype_len = len(data__inputsignatures__distinct_item__kinds_item__dtype)
                                                        if data__inputsignatures__distinct_item__kinds_item__dtype_len > 100:
                                                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].dtype".format(**locals()) + " must be shorter than or equal to 100 characters", value=data__inputsignatures__distinct_item__kinds_item__dtype, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].dtype".format(**locals()) + "", definition={'type': ['string', 'null'], 'maxLength': 100}, rule='maxLength')
                                                if "shape" in data__inputsignatures__distinct_item__kinds_item_keys:
                                                    data__inputsignatures__distinct_item__kinds_item_keys.remove("shape")
                                                    data__inputsignatures__distinct_item__kinds_item__shape = data__inputsignatures__distinct_item__kinds_item["shape"]
                                                    if not isinstance(data__inputsignatures__distinct_item__kinds_item__shape, (list, tuple, NoneType)):
                                                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].shape".format(**locals()) + " must be array or null", value=data__inputsignatures__distinct_item__kinds_item__shape, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].shape".format(**locals()) + "", definition={'type': ['array', 'null'], 'maxItems': 64, 'items': {'type': ['integer', 'null']}}, rule='type')
                                                    data__inputsignatures__distinct_item__kinds_item__shape_is_list = isinstance(data__inputsignatures__distinct_item__kinds_item__shape, (list, tuple))
                                                    if data__inputsignatures__distinct_item__kinds_item__shape_is_list:
                                                        data__inputsignatures__distinct_item__kinds_item__shape_len = len(data__inputsignatures__distinct_item__kinds_item__shape)
                                                        if data__inputsignatures__distinct_item__kinds_item__shape_len > 64:
                                                            raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].shape".format(**locals()) + " must contain less than or equal to 64 items", value=data__inputsignatures__distinct_item__kinds_item__shape, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].shape".format(**locals()) + "", definition={'type': ['array', 'null'], 'maxItems': 64, 'items': {'type': ['integer', 'null']}}, rule='maxItems')
                                                        for data__inputsignatures__distinct_item__kinds_item__shape_x, data__inputsignatures__distinct_item__kinds_item__shape_item in enumerate(data__inputsignatures__distinct_item__kinds_item__shape):
                                                            if not isinstance(data__inputsignatures__distinct_item__kinds_item__shape_item, (int, NoneType)) and not (isinstance(data__inputsignatures__distinct_item__kinds_item__shape_item, float) and data__inputsignatures__distinct_item__kinds_item__shape_item.is_integer()) or isinstance(data__inputsignatures__distinct_item__kinds_item__shape_item, bool):
                                                                raise JsonSchemaValueException("" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].shape[{data__inputsignatures__distinct_item__kinds_item__shape_x}]".format(**locals()) + " must be integer or null", value=data__inputsignatures__distinct_item__kinds_item__shape_item, name="" + (name_prefix or "data") + ".input_signatures.distinct[{data__inputsignatures__distinct_x}].kinds[{data__inputsignatures__distinct_item__kinds_x}].shape[{data__inputsignatures__distinct_item__kinds_item__shape_x}]".format(**locals()) + "", definition={'type': ['integer', 'null']}, rule='type')
    return data

def validate_https___traceinsight_dev_schemas_timings_schema_json___defs_phase_load(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict, NoneType)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object or null", value=data, name="" + (name_prefix or "data") + "", definition={'type': ['object', 'null'], 'properties': {'t_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, 'loadavg_end': {'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, 'other_cpu_busy': {'type': ['number', 'null'], 'minimum': 0, 'maximum': 1}, 'steal': {'type': ['number', 'null'], 'minimum': 0, 'maximum': 1}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data_keys = set(data.keys())
        if "t_start_unix" in data_keys:
            data_keys.remove("t_start_unix")
            data__tstartunix = data["t_start_unix"]
            if not isinstance(data__tstartunix, (int, float, Decimal, NoneType)) or isinstance(data__tstartunix, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".t_start_unix must be number or null", value=data__tstartunix, name="" + (name_prefix or "data") + ".t_start_unix", definition={'type': ['number', 'null']}, rule='type')
        if "t_end_unix" in data_keys:
            data_keys.remove("t_end_unix")
            data__tendunix = data["t_end_unix"]
            if not isinstance(data__tendunix, (int, float, Decimal, NoneType)) or isinstance(data__tendunix, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".t_end_unix must be number or null", value=data__tendunix, name="" + (name_prefix or "data") + ".t_end_unix", definition={'type': ['number', 'null']}, rule='type')
        if "loadavg" in data_keys:
            data_keys.remove("loadavg")
            data__loadavg = data["loadavg"]
            validate_https___traceinsight_dev_schemas_timings_schema_json___defs_loadavg(data__loadavg, custom_formats, (name_prefix or "data") + ".loadavg")
        if "loadavg_end" in data_keys:
            data_keys.remove("loadavg_end")
            data__loadavgend = data["loadavg_end"]
            validate_https___traceinsight_dev_schemas_timings_schema_json___defs_loadavg(data__loadavgend, custom_formats, (name_prefix or "data") + ".loadavg_end")
        if "other_cpu_busy" in data_keys:
            data_keys.remove("other_cpu_busy")
            data__othercpubusy = data["other_cpu_busy"]
            validate_https___traceinsight_dev_schemas_timings_schema_json___defs_share(data__othercpubusy, custom_formats, (name_prefix or "data") + ".other_cpu_busy")
        if "steal" in data_keys:
            data_keys.remove("steal")
            data__steal = data["steal"]
            validate_https___traceinsight_dev_schemas_timings_schema_json___defs_share(data__steal, custom_formats, (name_prefix or "data") + ".steal")
        if "own_cpu_busy" in data_keys:
            data_keys.remove("own_cpu_busy")
            data__owncpubusy = data["own_cpu_busy"]
            if not isinstance(data__owncpubusy, (int, float, Decimal, NoneType)) or isinstance(data__owncpubusy, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".own_cpu_busy must be number or null", value=data__owncpubusy, name="" + (name_prefix or "data") + ".own_cpu_busy", definition={'type': ['number', 'null'], 'minimum': 0}, rule='type')
            if isinstance(data__owncpubusy, (int, float, Decimal)) and not isinstance(data__owncpubusy, bool):
                if data__owncpubusy < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".own_cpu_busy must be bigger than or equal to 0", value=data__owncpubusy, name="" + (name_prefix or "data") + ".own_cpu_busy", definition={'type': ['number', 'null'], 'minimum': 0}, rule='minimum')
    return data

def validate_https___traceinsight_dev_schemas_timings_schema_json___defs_loadavg(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (list, tuple, NoneType)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be array or null", value=data, name="" + (name_prefix or "data") + "", definition={'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, rule='type')
    data_is_list = isinstance(data, (list, tuple))
    if data_is_list:
        data_len = len(data)
        if data_len > 3:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain less than or equal to 3 items", value=data, name="" + (name_prefix or "data") + "", definition={'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, rule='maxItems')
        for data_x, data_item in enumerate(data):
            if not isinstance(data_item, (int, float, Decimal)) or isinstance(data_item, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + "[{data_x}]".format(**locals()) + " must be number", value=data_item, name="" + (name_prefix or "data") + "[{data_x}]".format(**locals()) + "", definition={'type': 'number', 'minimum': 0}, rule='type')
            if isinstance(data_item, (int, float, Decimal)) and not isinstance(data_item, bool):
                if data_item < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + "[{data_x}]".format(**locals()) + " must be bigger than or equal to 0", value=data_item, name="" + (name_prefix or "data") + "[{data_x}]".format(**locals()) + "", definition={'type': 'number', 'minimum': 0}, rule='minimum')
    return data

def validate_https___traceinsight_dev_schemas_timings_schema_json___defs_share(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (int, float, Decimal, NoneType)) or isinstance(data, bool):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be number or null", value=data, name="" + (name_prefix or "data") + "", definition={'type': ['number', 'null'], 'minimum': 0, 'maximum': 1}, rule='type')
    if isinstance(data, (int, float, Decimal)) and not isinstance(data, bool):
        if data < 0:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must be bigger than or equal to 0", value=data, name="" + (name_prefix or "data") + "", definition={'type': ['number', 'null'], 'minimum': 0, 'maximum': 1}, rule='minimum')
        if data > 1:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must be smaller than or equal to 1", value=data, name="" + (name_prefix or "data") + "", definition={'type': ['number', 'null'], 'minimum': 0, 'maximum': 1}, rule='maximum')
    return data

def validate_https___traceinsight_dev_schemas_timings_schema_json___defs_round(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object", value=data, name="" + (name_prefix or "data") + "", definition={'type': 'object', 'properties': {'round': {'type': 'integer', 'minimum': 0}, 'steps_s': {'type': ['array', 'null'], 'items': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds'}, 'maxItems': 10000000}, 'step_nums': {'type': ['array', 'null'], 'items': {'type': 'integer'}, 'maxItems': 10000000}, 't_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, 'loadavg_end': {'type': ['array', 'null'], 'maxItems': 3, 'items': {'type': 'number', 'minimum': 0}}, 'other_cpu_busy': {'type': ['number', 'null'], 'minimum': 0, 'maximum': 1}, 'steal': {'type': ['number', 'null'], 'minimum': 0, 'maximum': 1}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data_keys = set(data.keys())
        if "round" in data_keys:
            data_keys.remove("round")
            data__round = data["round"]
            if not isinstance(data__round, (int)) and not (isinstance(data__round, float) and data__round.is_integer()) or isinstance(data__round, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".round must be integer", value=data__round, name="" + (name_prefix or "data") + ".round", definition={'type': 'integer', 'minimum': 0}, rule='type')
            if isinstance(data__round, (int, float, Decimal)) and not isinstance(data__round, bool):
                if data__round < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".round must be bigger than or equal to 0", value=data__round, name="" + (name_prefix or "data") + ".round", definition={'type': 'integer', 'minimum': 0}, rule='minimum')
        if "steps_s" in data_keys:
            data_keys.remove("steps_s")
            data__stepss = data["steps_s"]
            validate_https___traceinsight_dev_schemas_timings_schema_json___defs_seconds_list(data__stepss, custom_formats, (name_prefix or "data") + ".steps_s")
        if "step_nums" in data_keys:
            data_keys.remove("step_nums")
            data__stepnums = data["step_nums"]
            if not isinstance(data__stepnums, (list, tuple, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".step_nums must be array or null", value=data__stepnums, name="" + (name_prefix or "data") + ".step_nums", definition={'type': ['array', 'null'], 'items': {'type': 'integer'}, 'maxItems': 10000000}, rule='type')
            data__stepnums_is_list = isinstance(data__stepnums, (list, tuple))
            if data__stepnums_is_list:
                data__stepnums_len = len(data__stepnums)
                if data__stepnums_len > 10000000:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".step_nums must contain less than or equal to 10000000 items", value=data__stepnums, name="" + (name_prefix or "data") + ".step_nums", definition={'type': ['array', 'null'], 'items': {'type': 'integer'}, 'maxItems': 10000000}, rule='maxItems')
                for data__stepnums_x, data__stepnums_item in enumerate(data__stepnums):
                    if not isinstance(data__stepnums_item, (int)) and not (isinstance(data__stepnums_item, float) and data__stepnums_item.is_integer()) or isinstance(data__stepnums_item, bool):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".step_nums[{data__stepnums_x}]".format(**locals()) + " must be integer", value=data__stepnums_item, name="" + (name_prefix or "data") + ".step_nums[{data__stepnums_x}]".format(**locals()) + "", definition={'type': 'integer'}, rule='type')
        if "t_start_unix" in data_keys:
            data_keys.remove("t_start_unix")
            data__tstartunix = data["t_start_unix"]
            if not isinstance(data__tstartunix, (int, float, Decimal, NoneType)) or isinstance(data__tstartunix, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".t_start_unix must be number or null", value=data__tstartunix, name="" + (name_prefix or "data") + ".t_start_unix", definition={'type': ['number', 'null']}, rule='type')
        if "t_end_unix" in data_keys:
            data_keys.remove("t_end_unix")
            data__tendunix = data["t_end_unix"]
            if not isinstance(data__tendunix, (int, float, Decimal, NoneType)) or isinstance(data__tendunix, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".t_end_unix must be number or null", value=data__tendunix, name="" + (name_prefix or "data") + ".t_end_unix", definition={'type': ['number', 'null']}, rule='type')
        if "loadavg" in data_keys:
            data_keys.remove("loadavg")
            data__loadavg = data["loadavg"]
            validate_https___traceinsight_dev_schemas_timings_schema_json___defs_loadavg(data__loadavg, custom_formats, (name_prefix or "data") + ".loadavg")
        if "loadavg_end" in data_keys:
            data_keys.remove("loadavg_end")
            data__loadavgend = data["loadavg_end"]
            validate_https___traceinsight_dev_schemas_timings_schema_json___defs_loadavg(data__loadavgend, custom_formats, (name_prefix or "data") + ".loadavg_end")
        if "other_cpu_busy" in data_keys:
            data_keys.remove("other_cpu_busy")
            data__othercpubusy = data["other_cpu_busy"]
            validate_https___traceinsight_dev_schemas_timings_schema_json___defs_share(data__othercpubusy, custom_formats, (name_prefix or "data") + ".other_cpu_busy")
        if "steal" in data_keys:
            data_keys.remove("steal")
            data__steal = data["steal"]
            validate_https___traceinsight_dev_schemas_timings_schema_json___defs_share(data__steal, custom_formats, (name_prefix or "data") + ".steal")
        if "own_cpu_busy" in data_keys:
            data_keys.remove("own_cpu_busy")
            data__owncpubusy = data["own_cpu_busy"]
            if not isinstance(data__owncpubusy, (int, float, Decimal, NoneType)) or isinstance(data__owncpubusy, bool):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".own_cpu_busy must be number or null", value=data__owncpubusy, name="" + (name_prefix or "data") + ".own_cpu_busy", definition={'type': ['number', 'null'], 'minimum': 0}, rule='type')
            if isinstance(data__owncpubusy, (int, float, Decimal)) and not isinstance(data__owncpubusy, bool):
                if data__owncpubusy < 0:
                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".own_cpu_busy must be bigger than or equal to 0", value=data__owncpubusy, name="" + (name_prefix or "data") + ".own_cpu_busy", definition={'type': ['number', 'null'], 'minimum': 0}, rule='minimum')
    return data

def validate_https___traceinsight_dev_schemas_timings_schema_json___defs_pass(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (dict, NoneType)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be object or null", value=data, name="" + (name_prefix or "data") + "", definition={'type': ['object', 'null'], 'properties': {'steps_s': {'type': ['array', 'null'], 'items': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/seconds'}, 'maxItems': 10000000}, 'problem': {'type': ['string', 'null']}, 'first_step_note': {'type': ['string', 'null']}, 'load': {'type': ['object', 'null'], 'properties': {'t_start_unix': {'type': ['number', 'null']}, 't_end_unix': {'type': ['number', 'null']}, 'loadavg': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'loadavg_end': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/loadavg'}, 'other_cpu_busy': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'steal': {'$ref': 'https://traceinsight.dev/schemas/timings.schema.json#/$defs/share'}, 'own_cpu_busy': {'type': ['number', 'null'], 'minimum': 0}}}, 'profile_options': {'type': ['object', 'null'], 'properties': {'requested': {'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}, 'recorded': {'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}}}}}, rule='type')
    data_is_dict = isinstance(data, dict)
    if data_is_dict:
        data_keys = set(data.keys())
        if "steps_s" in data_keys:
            data_keys.remove("steps_s")
            data__stepss = data["steps_s"]
            validate_https___traceinsight_dev_schemas_timings_schema_json___defs_seconds_list(data__stepss, custom_formats, (name_prefix or "data") + ".steps_s")
        if "problem" in data_keys:
            data_keys.remove("problem")
            data__problem = data["problem"]
            if not isinstance(data__problem, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".problem must be string or null", value=data__problem, name="" + (name_prefix or "data") + ".problem", definition={'type': ['string', 'null']}, rule='type')
        if "first_step_note" in data_keys:
            data_keys.remove("first_step_note")
            data__firststepnote = data["first_step_note"]
            if not isinstance(data__firststepnote, (str, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".first_step_note must be string or null", value=data__firststepnote, name="" + (name_prefix or "data") + ".first_step_note", definition={'type': ['string', 'null']}, rule='type')
        if "load" in data_keys:
            data_keys.remove("load")
            data__load = data["load"]
            validate_https___traceinsight_dev_schemas_timings_schema_json___defs_phase_load(data__load, custom_formats, (name_prefix or "data") + ".load")
        if "profile_options" in data_keys:
            data_keys.remove("profile_options")
            data__profileoptions = data["profile_options"]
            if not isinstance(data__profileoptions, (dict, NoneType)):
                raise JsonSchemaValueException("" + (name_prefix or "data") + ".profile_options must be object or null", value=data__profileoptions, name="" + (name_prefix or "data") + ".profile_options", definition={'type': ['object', 'null'], 'properties': {'requested': {'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}, 'recorded': {'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}}}, rule='type')
            data__profileoptions_is_dict = isinstance(data__profileoptions, dict)
            if data__profileoptions_is_dict:
                data__profileoptions_keys = set(data__profileoptions.keys())
                if "requested" in data__profileoptions_keys:
                    data__profileoptions_keys.remove("requested")
                    data__profileoptions__requested = data__profileoptions["requested"]
                    if not isinstance(data__profileoptions__requested, (dict, NoneType)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".profile_options.requested must be object or null", value=data__profileoptions__requested, name="" + (name_prefix or "data") + ".profile_options.requested", definition={'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}, rule='type')
                    data__profileoptions__requested_is_dict = isinstance(data__profileoptions__requested, dict)
                    if data__profileoptions__requested_is_dict:
                        data__profileoptions__requested_keys = set(data__profileoptions__requested.keys())
                        for data__profileoptions__requested_key in data__profileoptions__requested_keys:
                            if data__profileoptions__requested_key not in []:
                                data__profileoptions__requested_value = data__profileoptions__requested.get(data__profileoptions__requested_key)
                                if not isinstance(data__profileoptions__requested_value, (int, bool, NoneType)) and not (isinstance(data__profileoptions__requested_value, float) and data__profileoptions__requested_value.is_integer()):
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".profile_options.requested.{data__profileoptions__requested_key}".format(**locals()) + " must be integer or boolean or null", value=data__profileoptions__requested_value, name="" + (name_prefix or "data") + ".profile_options.requested.{data__profileoptions__requested_key}".format(**locals()) + "", definition={'type': ['integer', 'boolean', 'null']}, rule='type')
                if "recorded" in data__profileoptions_keys:
                    data__profileoptions_keys.remove("recorded")
                    data__profileoptions__recorded = data__profileoptions["recorded"]
                    if not isinstance(data__profileoptions__recorded, (dict, NoneType)):
                        raise JsonSchemaValueException("" + (name_prefix or "data") + ".profile_options.recorded must be object or null", value=data__profileoptions__recorded, name="" + (name_prefix or "data") + ".profile_options.recorded", definition={'type': ['object', 'null'], 'additionalProperties': {'type': ['integer', 'boolean', 'null']}}, rule='type')
                    data__profileoptions__recorded_is_dict = isinstance(data__profileoptions__recorded, dict)
                    if data__profileoptions__recorded_is_dict:
                        data__profileoptions__recorded_keys = set(data__profileoptions__recorded.keys())
                        for data__profileoptions__recorded_key in data__profileoptions__recorded_keys:
                            if data__profileoptions__recorded_key not in []:
                                data__profileoptions__recorded_value = data__profileoptions__recorded.get(data__profileoptions__recorded_key)
                                if not isinstance(data__profileoptions__recorded_value, (int, bool, NoneType)) and not (isinstance(data__profileoptions__recorded_value, float) and data__profileoptions__recorded_value.is_integer()):
                                    raise JsonSchemaValueException("" + (name_prefix or "data") + ".profile_options.recorded.{data__profileoptions__recorded_key}".format(**locals()) + " must be integer or boolean or null", value=data__profileoptions__recorded_value, name="" + (name_prefix or "data") + ".profile_options.recorded.{data__profileoptions__recorded_key}".format(**locals()) + "", definition={'type': ['integer', 'boolean', 'null']}, rule='type')
    return data

def validate_https___traceinsight_dev_schemas_timings_schema_json___defs_seconds(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (int, float, Decimal)) or isinstance(data, bool):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be number", value=data, name="" + (name_prefix or "data") + "", definition={'type': 'number', 'minimum': 0, 'maximum': 86400}, rule='type')
    if isinstance(data, (int, float, Decimal)) and not isinstance(data, bool):
        if data < 0:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must be bigger than or equal to 0", value=data, name="" + (name_prefix or "data") + "", definition={'type': 'number', 'minimum': 0, 'maximum': 86400}, rule='minimum')
        if data > 86400:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must be smaller than or equal to 86400", value=data, name="" + (name_prefix or "data") + "", definition={'type': 'number', 'minimum': 0, 'maximum': 86400}, rule='maximum')
    return data

def validate_https___traceinsight_dev_schemas_timings_schema_json___defs_seconds_list(data, custom_formats={}, name_prefix=None):
    if not isinstance(data, (list, tuple, NoneType)):
        raise JsonSchemaValueException("" + (name_prefix or "data") + " must be array or null", value=data, name="" + (name_prefix or "data") + "", definition={'type': ['array', 'null'], 'items': {'type': 'number', 'minimum': 0, 'maximum': 86400}, 'maxItems': 10000000}, rule='type')
    data_is_list = isinstance(data, (list, tuple))
    if data_is_list:
        data_len = len(data)
        if data_len > 10000000:
            raise JsonSchemaValueException("" + (name_prefix or "data") + " must contain less than or equal to 10000000 items", value=data, name="" + (name_prefix or "data") + "", definition={'type': ['array', 'null'], 'items': {'type': 'number', 'minimum': 0, 'maximum': 86400}, 'maxItems': 10000000}, rule='maxItems')
        for data_x, data_item in enumerate(data):
            validate_https___traceinsight_dev_schemas_timings_schema_json___defs_seconds(data_item, custom_formats, (name_prefix or "data") + "[{data_x}]".format(**locals()))
    return data


SCHEMA_SHA256 = '5fe76ace52411b04e92abb789867f905e12198d6e5498f291ea8c39f6a077a9e'
validate = validate_https___traceinsight_dev_schemas_timings_schema_json
