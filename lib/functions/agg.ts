// (in progress) registers the agg functions
