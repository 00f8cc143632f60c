from yzos_jobs.cli import main

main()
