"""`supply` (the seed's name): the pipeline that turns an ended observed session into entities,
by promoting that session's candidates inline."""
