// (in progress) registers the array functions
