#!/usr/bin/env python3
"""Per-construct oracle for the Java renderer: small templates rendered by real jinja2 in transformers'
own environment (transformers.utils.chat_template_utils._compile_jinja_template: the immutable sandbox,
trim_blocks, lstrip_blocks, loopcontrols, transformers' tojson and raise_exception).

Usage (same pip packages as generate_goldens.py), from the repository root:
    python3 router-plugin/src/test/golden/generate_constructs.py > router-plugin/src/test/resources/golden/constructs.jsonl

One JSON object per line: {"name", "template", "vars", "out"} or {"name", "template", "vars", "error"}.
"""
import json
import sys

from transformers.utils.chat_template_utils import _compile_jinja_template

M = {"role": "user", "content": "  hi  ", "n": 3, "f": 1.5, "none": None, "items": "key named items"}
CASES = [
    # whitespace control, trim_blocks, lstrip_blocks, trailing newline
    ("trim_blocks", "{% if true %}\nA{% endif %}\nB\n", {}),
    ("lstrip_blocks", "x\n    {% if true %}\n    y\n    {% endif %}\nz", {}),
    ("lstrip_not_for_vars", "x\n    {{ 'v' }}\n", {}),
    ("dash_left_right", "a  \n {{- ' b ' -}}  \n c", {}),
    ("dash_block", "a \n{%- if true -%}\n  b  \n{%- endif -%}\n c", {}),
    ("plus_disables_lstrip", "x\n    {%+ if true %}y{% endif %}", {}),
    ("comment", "a\n  {# note #}\nb{#- x -#}  c", {}),
    ("trailing_newline_one", "a\n\n", {}),
    ("crlf_source", "a\r\n{% if true %}\r\nb{% endif %}\r\n", {}),
    ("unicode_ws_strip", "x {{- '\u3000y\u00a0' -}} \u3000z", {}),
    # values and printing
    ("print_values", "{{ true }} {{ none }} {{ 1.0 }} {{ 1e-7 }} {{ 1e20 }} {{ 2.5e16 }} {{ 0.1 + 0.2 }} {{ -0.0 }}", {}),
    ("print_containers", "{{ [1, 'a', none, true, 1.5] }} {{ {'a': 1, 'b': [none]} }} {{ (1,) }} {{ () }}", {}),
    ("print_repr_quotes", "{{ [\"it's\", 'say \"x\"', 'both \\' \"', 'nl\\n\\t\\x01\u00a0\u3000\ufeffé😀'] }}", {}),
    ("print_dict_input", "{{ m }}", {"m": M}),
    ("undefined_prints_empty", "[{{ nope }}][{{ m.nope }}][{{ m['nope'] }}][{{ none.x }}]", {"m": M}),
    ("undefined_length", "{{ nope | length }} {{ nope is defined }} {{ m.none is none }}", {"m": M}),
    ("attr_vs_item", "{{ m['items'] }}|{{ m.role }}|{{ m.get('n') }}|{{ m.get('x', 7) }}", {"m": M}),
    ("dict_methods", "{% for k, v in m.items() %}{{ k }}={{ v }};{% endfor %}{{ m.keys() | list }}", {"m": M}),
    ("print_method_object", "{{ m.items }}", {"m": M}),
    ("print_items_view", "{{ m.items() }}", {"m": M}),
    # operators
    ("concat_tilde", "{{ 'a' ~ 1 ~ none ~ nope ~ true }}", {}),
    ("plus_str_int", "{{ 'a' + 1 }}", {}),
    ("plus_undefined", "{{ nope + 'a' }}", {}),
    ("filter_binds_tighter", "{{ 'x' + ' y ' | trim + 'z' }}", {}),
    ("arith", "{{ 7 / 2 }} {{ 7 // 2 }} {{ 4 / 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 2 ** 10 }} {{ 7.5 % 2 }}", {}),
    ("arith_bool", "{{ true + 1 }} {{ true == 1 }} {{ 1 == 1.0 }} {{ [1] + [2] }} {{ 'ab' * 3 }}", {}),
    ("div_zero", "{{ 1 / 0 }}", {}),
    ("and_or_operands", "{{ 0 or 'b' }} {{ 'a' and 'b' }} {{ '' and 'b' }}|{{ none or [] }}|{{ not 0 }}", {}),
    ("compare_chain", "{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }}", {}),
    ("compare_type_error", "{{ 1 < 'a' }}", {}),
    ("in_ops", "{{ 'a' in 'cat' }} {{ 2 in [1, 2] }} {{ 'role' in m }} {{ 'x' not in m }} {{ 1 in nope }}", {"m": M}),
    ("in_none", "{{ 'a' in none }}", {}),
    ("condexpr", "{{ 'y' if true else 'n' }}{{ 'y' if false else 'n' }}[{{ 'y' if false }}]", {}),
    ("not_is_defined", "{% if not add_generation_prompt is defined %}unset{% else %}set{% endif %}", {"add_generation_prompt": False}),
    ("neg_filter", "{{ -1 | abs }} {{ -(3) }}", {}),
    # subscripts and slices
    ("index_neg", "{{ l[0] }}{{ l[-1] }}[{{ l[9] }}]{{ s[1] }}{{ s[-1] }}", {"l": [1, 2, 3], "s": "a😀b"}),
    ("slices", "{{ l[::-1] }} {{ l[1:] }} {{ l[:-1] }} {{ l[::2] }} {{ l[5:] }} {{ l[-9:2] }} {{ l[2:0:-1] }}", {"l": [1, 2, 3, 4]}),
    ("string_slices", "{{ s[::-1] }}|{{ s[1:3] }}|{{ s[:-1] }}", {"s": "a😀bc"}),
    ("undefined_subscript", "{{ nope[0] }}", {}),
    ("undefined_attr", "{{ nope.x }}", {}),
    # string methods
    ("strip_family", "[{{ s.strip() }}][{{ s.lstrip() }}][{{ s.rstrip() }}][{{ t.strip('\\n') }}][{{ t.lstrip('\\n ') }}]",
     {"s": "\u00a0\x85 x \u3000\ufeff", "t": "\n\n x \n"}),
    ("split", "{{ 'a</think>'.split('</think>') }} {{ ' a  b '.split() }} {{ 'a,b,c'.split(',', 1) }} {{ 'a b  c  '.split(none, 1) }}", {}),
    ("starts_ends", "{{ 'hello'.startswith('he') }} {{ 'hello'.endswith(('x', 'lo')) }} {{ ''.startswith('') }}", {}),
    ("case_methods", "{{ 'hello wORLD'.title() }} {{ 'ab'.upper() }} {{ 'AB'.lower() }} {{ 'hELLO'.capitalize() }} {{ \"they're x-ray\".title() }}", {}),
    ("replace_method", "{{ 'aaa'.replace('a', 'b') }} {{ 'aaa'.replace('a', 'b', 2) }} {{ 'ab'.replace('', '-') }}", {}),
    ("find_count_join", "{{ 'a😀b'.find('b') }} {{ 'aXbXc'.count('X') }} {{ '-'.join(['a', 'b']) }}", {}),
    ("method_on_list", "{{ l.startswith('a') }}", {"l": [1]}),
    ("sandbox_append", "{{ l.append(1) }}", {"l": [1]}),
    ("sandbox_update", "{% set d = {} %}{{ d.update({'a': 1}) }}", {}),
    # filters
    ("trim_filter", "[{{ s | trim }}][{{ none | trim }}][{{ nope | trim }}][{{ 'xxaxx' | trim('x') }}]", {"s": "\u00a0\x85 x \u2007"}),
    ("length_filter", "{{ 'a😀' | length }} {{ [1, 2] | length }} {{ m | length }} {{ l | count }}", {"m": M, "l": [1]}),
    ("length_none", "{{ none | length }}", {}),
    ("tojson_default", "{{ v | tojson }}", {"v": {"b": 1.0, "a": [1e-07, 2.5e20, None, True, "<é>\u2028\x01\"\\/"], "n": {}, "e": []}}),
    ("tojson_indent", "{{ v | tojson(indent=2) }}|{{ v | tojson(indent=0) }}", {"v": {"a": [1, {"b": None}], "c": []}}),
    ("tojson_sort_sep", "{{ v | tojson(sort_keys=true) }}|{{ v | tojson(separators=(',', ':')) }}|{{ v | tojson(ensure_ascii=true) }}",
     {"v": {"z": "é😀", "a": 1}}),
    ("tojson_str_num", "{{ 'a\"b' | tojson }} {{ 3 | tojson }} {{ 1.5 | tojson }} {{ none | tojson }}", {}),
    ("tojson_undefined", "{{ nope | tojson }}", {}),
    ("join_filter", "{{ [1, 'a', none] | join(', ') }} {{ l | join('-', attribute='n') }}", {"l": [{"n": 1}, {"n": 2}]}),
    ("default_filter", "{{ nope | default('d') }} {{ none | default('d') }} {{ '' | default('d', true) }} {{ 0 | d(5) }}", {}),
    ("case_filters", "{{ 'hello wORLD x-ray' | title }} {{ 'ab' | upper }} {{ 'hELLO' | capitalize }} {{ 'AB' | lower }}", {}),
    ("first_last_reverse", "{{ l | first }} {{ l | last }} {{ l | reverse | list }} {{ 'abc' | reverse }}", {"l": [1, 2, 3]}),
    ("print_reverse_iter", "{{ [1, 2] | reverse }}", {}),
    ("string_int_float", "{{ 1 | string }}{{ '3' | int + 1 }} {{ 'x' | int }} {{ '2.5' | float }} {{ 3.9 | int }}", {}),
    ("select_map", "{{ l | selectattr('role', 'equalto', 'user') | map(attribute='c') | join(',') }} "
     "{{ l | rejectattr('role', 'equalto', 'user') | list | length }} {{ l | map(attribute='c') | list }}",
     {"l": [{"role": "user", "c": 1}, {"role": "bot", "c": 2}, {"role": "user", "c": 3}]}),
    ("items_dictsort", "{{ m | items | list }} {{ {'b': 1, 'A': 2} | dictsort }}", {"m": {"x": 1}}),
    ("unique_sum_minmax", "{{ [1, 2, 1] | unique | list }} {{ [1, 2.5] | sum }} {{ [3, 1] | min }} {{ [3, 1] | max }}", {}),
    ("round_filter", "{{ 2.5 | round }} {{ 3.14159 | round(2) }} {{ 1 | round }}", {}),
    ("indent_filter", "{{ 'a\\nb\\n\\nc' | indent(2) }}|{{ 'a\\nb' | indent(2, true) }}", {}),
    # tests
    ("tests_types", "{{ 'a' is string }} {{ 1 is number }} {{ true is number }} {{ 1 is integer }} {{ true is integer }} "
     "{{ 1.0 is float }} {{ true is boolean }} {{ m is mapping }} {{ l is iterable }} {{ nope is iterable }} "
     "{{ 'a' is sequence }} {{ none is none }} {{ 1 is true }} {{ true is true }} {{ false is false }} {{ 0 is false }}",
     {"m": {}, "l": []}),
    ("tests_values", "{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(2) }} {{ 'ab' is lower }} "
     "{{ 'AB' is upper }} {{ 1 is in [1] }} {{ 2 is equalto 2 }} {{ 2 is eq(3) }} {{ 3 is gt 2 }} {{ 'a' is not defined }}", {}),
    # statements
    ("for_loop_vars", "{% for x in l %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}"
     "{{ loop.revindex }}{{ loop.previtem }}{{ loop.nextitem }};{% endfor %}", {"l": ["a", "b", "c"]}),
    ("for_else_filter", "{% for x in l if x > 1 %}{{ x }}{{ loop.length }}{% else %}none{% endfor %}|"
     "{% for x in [] %}x{% else %}empty{% endfor %}", {"l": [1, 2, 3]}),
    ("for_dict_string", "{% for k in m %}{{ k }}{% endfor %}|{% for c in 'a😀' %}[{{ c }}]{% endfor %}", {"m": {"a": 1, "b": 2}}),
    ("for_unpack", "{% for a, b in [[1, 2], (3, 4)] %}{{ a }}{{ b }}{% endfor %}", {}),
    ("for_none", "{% for x in none %}{% endfor %}", {}),
    ("loop_controls", "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %}", {}),
    ("loop_cycle", "{% for x in range(4) %}{{ loop.cycle('a', 'b') }}{% endfor %}", {}),
    ("range_forms", "{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ range(3, 0, -1) | list }}", {}),
    ("range_print", "{{ range(3) }}", {}),
    ("set_scoping", "{% set x = 1 %}{% for i in [5, 6] %}{{ x }}{% set x = i %}{{ x }}|{% endfor %}{{ x }}"
     "{% if true %}{% set y = 2 %}{% endif %}{{ y }}", {}),
    ("set_in_loop_next_iteration", "{% for i in [5, 6] %}{% if i == 6 %}[{{ y }}]{% endif %}{% set y = i %}{% endfor %}", {}),
    ("namespace", "{% set ns = namespace(a=1, b=none, c='x') %}{% for i in [1, 2] %}{% set ns.a = ns.a + i %}{% endfor %}"
     "{{ ns.a }}{{ ns.b }}{{ ns.c }}", {}),
    ("set_attr_non_namespace", "{% set d = {} %}{% set d.a = 1 %}", {}),
    ("set_tuple_and_block", "{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set c %}block {{ a }}{% endset %}[{{ c }}]", {}),
    ("print_tuple", "{{ 1, 'a' }}", {}),
    ("macro", "{% macro m(a, b='d', c=none) %}<{{ a }}|{{ b }}|{{ c }}|{{ z }}>{% endmacro %}{% set z = 9 %}"
     "{{ m(1) }}{{ m(1, 2) }}{{ m('x', c=3) }}{% set r = m(0) %}[{{ r }}]", {}),
    ("macro_recursive", "{% macro f(n) %}{% if n > 0 %}{{ n }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(3) }}", {}),
    ("macro_too_many_args", "{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", {}),
    ("raise_exception", "a{{ raise_exception('bad role') }}", {}),
    # globals are names like any other (vLLM's Llama 3.1 tool template: `if strftime_now is defined`)
    ("global_is_defined", "{{ strftime_now is defined }} {{ raise_exception is defined }} {{ namespace is callable }}"
     " {{ strftime_now is callable }} {{ nope is callable }}{% if strftime_now %} truthy{% endif %}", {}),
    ("global_shadowed_by_variable", "{{ strftime_now is defined }} {{ strftime_now }}", {"strftime_now": "x"}),
    ("global_printed", "{{ strftime_now }}", {}),
    ("global_plus_str", "{{ strftime_now + 'x' }}", {}),
    ("generation_tag", "{% generation %}kept{% endgeneration %}", {}),
    ("string_escapes", "{{ 'a\\nb\\tc\\\\d\\'e\\x41\\u00e9\\U0001F600' }}|{{ \"q\\\"x\" }}|{{ 'unknown \\q' }}|{{ 'a' 'b' }}", {}),
    ("dict_literal_braces", "{{ {'a': {'b': 1}} }}", {}),
    ("integer_literals", "{{ 1_000 }} {{ 1.5e3 }} {{ 0.5 }}", {}),
    ("nested_if", "{% if a %}A{% elif b %}B{% else %}C{% endif %}{% if not a and not b %}N{% endif %}", {"a": False, "b": True}),
]


def main():
    for name, template, variables in CASES:
        row = {"name": name, "template": template, "vars": variables}
        try:
            row["out"] = _compile_jinja_template(template).render(**variables)
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {e}"
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
