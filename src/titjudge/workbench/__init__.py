"""The workbench (`titjudge view`): every run, every judge, every pair in one local web app,
read from the runs' typed records (`catalog` finds the runs, `views` makes each page's JSON,
`server` serves them, `bundle` writes a static copy that works from file://)."""
