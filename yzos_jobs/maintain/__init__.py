"""`maintain` (the seed's name): the scheduled jobs that keep the knowledge base clean over time —
promote candidates, re-judge entities every 6 hours — and their run bookkeeping."""
