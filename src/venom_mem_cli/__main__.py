from venom_mem_cli.entry import main

main()
