// (in progress) registers the special functions
