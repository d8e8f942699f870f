"""The doors a user comes in by, beside the command line (``audit.__main__``): ``assert_private`` (``doors``),
the pytest plugin (``pytest_plugin``), claims files (``claims_file``), ``compare`` (``compare_command``), the
README's samples (``samples``), the fail-closed writer of a whole report or none (``fail_closed``) and the
command line's reference page (``cli_doc``). Nothing below imports them."""
