"""Personal data kept out of what leaves a context: the model's prompts and
tool results in the playground, and every log line, stored sample and error
answer that shows a value from outside.

`redactor` holds the rules and the Redactor that applies them, `patterns`
what personal data looks like, `normalised` the text the patterns read (the
way a value is written cannot walk around them), `skeleton` the look-alike
letters folded before a name is compared, and `preview` the one way to show
an outside value in a log, a row or an answer.
"""
