// (in progress) registers the datetime functions
