from helpers.protocols import main

main()
