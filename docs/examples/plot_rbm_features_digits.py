"""
RBM features for a classifier
=============================

``rbmlab.RBM`` is a scikit-learn transformer: ``transform`` gives the hidden means
p(h = 1 | v), features a linear classifier can read (the protocol of the frank_wolfe paper's
Figure 2). Here an RBM of 64 hidden units is trained for 10 epochs of CD-1 on scikit-learn's
8×8 digits binarised at 7.5, without the labels; a logistic regression is then fitted on the
pixels, on the 64 features, and on both side by side, and scored on held-out digits. Look at
the bars: on so small a set the features alone do about as well as the pixels, and the two
together do best; the right panel shows the weights of the first 32 hidden units as 8×8 filters.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from rbmlab import RBM

X, y = load_digits(return_X_y=True)
X = (X > 7.5).astype(np.float64)  # grey levels 0..16 binarised: {0, 1} visible units
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

rbm = RBM(n_components=64, n_iter=10, random_state=0).fit(X_train)  # CD-1, lr 0.1, batch 10
F_train, F_test = rbm.transform(X_train), rbm.transform(X_test)

inputs = {
    "pixels": (X_train, X_test),
    "RBM features": (F_train, F_test),
    "pixels + features": (np.hstack([X_train, F_train]), np.hstack([X_test, F_test])),
}
accuracy = {}
for name, (train, test) in inputs.items():
    # one BLAS thread for lbfgs's small products: a second one, kept waiting on a busy machine,
    # can make the fit several times slower
    with threadpool_limits(1):
        classifier = LogisticRegression(C=10.0, max_iter=1000).fit(train, y_train)
    accuracy[name] = classifier.score(test, y_test)
    print(f"{name:>18}: test accuracy {100 * accuracy[name]:.1f}%")

# the first 32 rows of components_ (= Wᵀ, one row per hidden unit) as 8×8 tiles, 4 rows of 8
tiles = np.full((4, 8, 9, 9), np.nan)
tiles[:, :, :8, :8] = rbm.components_[:32].reshape(4, 8, 8, 8)
mosaic = tiles.transpose(0, 2, 1, 3).reshape(36, 72)

fig, (ax, ax2) = plt.subplots(1, 2, figsize=(8, 3), width_ratios=[1, 1.4])
bars = ax.barh(list(accuracy), [100 * a for a in accuracy.values()], color=["0.6", "C0", "C1"])
ax.bar_label(bars, fmt="%.1f")
ax.set_xlim(80, 100)
ax.invert_yaxis()
ax.set_xlabel(f"test accuracy (%), {len(y_test)} digits")
limit = np.nanmax(np.abs(mosaic))
ax2.imshow(mosaic, cmap="RdBu_r", vmin=-limit, vmax=limit)
ax2.set_title("weights of 32 hidden units", fontsize=10)
ax2.set_axis_off()
fig.tight_layout()
