"""JSON Schemas of each platform's documents, written from the platform's own docs and
sources (not from our renderers), so a document that drifts from the platform fails.

- Gradescope: results.json as Gradescope's autograder docs specify it (score,
  max_score, output, visibility, stdout_visibility, execution_time, tests[]).
- PrairieLearn: docs/externalGrading.md of PrairieLearn/PrairieLearn ("Grading results"),
  and apps/prairielearn/src/lib/externalGraderCommon.ts (score a number; format_errors a
  string or a list of strings); info.json from
  apps/prairielearn/src/schemas/schemas/infoQuestion.json (required uuid, type, title,
  topic; externalGradingOptions requires image; no other keys).
- GitHub Classroom: classroom-resources/autograding-grading-reporter, src/main.js
  (base64 JSON per runner), src/console-results.js and notify-classroom.js (tests[].status
  pass|fail|error, line_no, test_code, score, max_score), and the result written by
  classroom-resources/autograding-python-grader, runner/data.py (version 3, status,
  message, tests[] of name, status, message, test_code, task_id, filename, line_no,
  duration, score, output of at most 500 characters).
"""

NUMBER = {"type": "number"}
STRING = {"type": "string"}

GRADESCOPE_RESULTS = {
    "type": "object",
    "required": ["score", "tests"],
    "properties": {
        "score": NUMBER, "max_score": NUMBER, "execution_time": NUMBER, "output": STRING,
        "visibility": {"enum": ["visible", "hidden", "after_due_date", "after_published"]},
        "stdout_visibility": {"enum": ["visible", "hidden", "after_due_date",
                                       "after_published"]},
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": {
            "type": "object",
            "required": ["score", "max_score", "name", "output"],
            "properties": {
                "score": NUMBER, "max_score": NUMBER, "name": STRING, "output": STRING,
                "status": {"enum": ["passed", "failed"]},
                "visibility": {"enum": ["visible", "hidden", "after_due_date",
                                        "after_published"]},
                "tags": {"type": "array", "items": STRING},
                "extra_data": {"type": "object"}}}}}}

_IMAGE = {"oneOf": [STRING, {"type": "object", "required": ["url"],
                             "properties": {"url": STRING, "label": STRING}}]}

PRAIRIELEARN_RESULTS = {
    "type": "object",
    "properties": {
        "gradable": {"type": "boolean"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "format_errors": {"oneOf": [STRING, {"type": "array", "items": STRING}]},
        "message": STRING, "output": STRING,
        "images": {"type": "array", "items": _IMAGE},
        "tests": {"type": "array", "items": {
            "type": "object",
            # every test has points and max_points, or PrairieLearn disables the
            # per-test points display for all of them
            "required": ["name", "points", "max_points"],
            "properties": {
                "name": STRING, "description": STRING, "message": STRING, "output": STRING,
                "points": {"type": "number", "minimum": 0},
                "max_points": {"type": "number", "minimum": 0},
                "images": {"type": "array", "items": _IMAGE}}}}},
    # gradable (or absent): a score is required; not gradable: gradable is false
    "oneOf": [
        {"required": ["score"], "properties": {"gradable": {"const": True}}},
        {"required": ["gradable"], "properties": {"gradable": {"const": False}}}],
}

PRAIRIELEARN_INFO_QUESTION = {
    "type": "object",
    "required": ["uuid", "type", "title", "topic"],
    "additionalProperties": False,
    "properties": {
        "uuid": {"type": "string", "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                                              "[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"},
        "type": {"enum": ["Calculation", "MultipleChoice", "Checkbox", "File",
                          "MultipleTrueFalse", "v3"]},
        "title": STRING, "topic": STRING, "comment": {},
        "tags": {"type": "array", "items": STRING},
        "gradingMethod": {"enum": ["Internal", "External", "Manual"]},
        "singleVariant": {"type": "boolean"},
        "partialCredit": {"type": "boolean"},
        "externalGradingOptions": {
            "type": "object",
            "required": ["image"],
            "additionalProperties": False,
            "properties": {
                "comment": {}, "enabled": {"type": "boolean"}, "image": STRING,
                "entrypoint": {"oneOf": [STRING, {"type": "array", "items": STRING}]},
                "serverFilesCourse": {"type": "array", "items": STRING},
                "timeout": {"type": "integer", "minimum": 1, "maximum": 600},
                "enableNetworking": {"type": "boolean"},
                "environment": {"type": "object", "additionalProperties": STRING}}}}}

CLASSROOM_RESULT = {
    "type": "object",
    "required": ["version", "status", "max_score", "tests"],
    "properties": {
        "version": {"const": 3},
        "status": {"enum": ["pass", "fail", "error"]},
        "message": {"type": ["string", "null"]},
        "max_score": {"type": "number", "minimum": 0},
        "tests": {"type": "array", "minItems": 1, "items": {
            "type": "object",
            "required": ["name", "status", "score", "line_no"],
            "properties": {
                "name": STRING, "status": {"enum": ["pass", "fail", "error"]},
                "message": {"type": ["string", "null"]}, "test_code": STRING,
                "filename": STRING, "line_no": {"type": "integer"},
                "duration": NUMBER, "score": {"type": "number", "minimum": 0},
                "task_id": {"type": "integer"},
                "output": {"type": ["string", "null"], "maxLength": 500}}}}}}
