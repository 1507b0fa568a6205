from rbmlab.cli import main

main()
