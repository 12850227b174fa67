import pytest
import torch


@pytest.fixture(scope="module")
def one_torch_thread():
    """A small model gains nothing from threads; on a busy machine spinning threads cost. The
    learning tests use it (``pytest.mark.usefixtures``)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
