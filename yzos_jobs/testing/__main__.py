from yzos_jobs.testing.double import main

main()
