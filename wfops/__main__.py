from wfops.cli.main import main

main()
