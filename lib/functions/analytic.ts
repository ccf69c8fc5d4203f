// (in progress) registers the analytic functions
