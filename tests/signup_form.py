"""The sign-up form the agent tests run on: its plan, and a site whose plain submit fails."""

# The third subtask's options: the plain submit fails on SITE, the other way through works.
SIGNUP = ["open page", "fill email", "submit | solve captcha then submit"]
SITE = {"submit": "error: captcha required"}
